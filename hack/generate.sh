#!/usr/bin/env bash
# Regenerates the deepcopy functions of api/ (zz_generated.deepcopy.go) and the CRD manifests in deploy/crds/
# with controller-gen, pinned in hack/tools/go.mod, and copies the CRDs into the Helm chart's crds/ (deploy's
# TestChartCRDsInSync fails when the copy is stale). Running it twice changes nothing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# controller-gen is built from the tools module into hack/tools/bin (git-ignored), so that its dependencies
# stay out of the main module and every run uses the pinned version.
bin="$root/hack/tools/bin"
(cd hack/tools && go build -o "$bin/controller-gen" sigs.k8s.io/controller-tools/cmd/controller-gen)

"$bin/controller-gen" object paths=./api/...
# Remove the previous manifests first so that a renamed or deleted type leaves no stale CRD behind.
rm -f deploy/crds/*.yaml
mkdir -p deploy/crds
"$bin/controller-gen" crd paths=./api/... output:crd:artifacts:config=deploy/crds
# Helm installs CRDs only from the chart's own crds/ folder, so the chart keeps a copy.
chart_crds=deploy/helm/packwright/crds
rm -f "$chart_crds"/*.yaml
mkdir -p "$chart_crds"
cp deploy/crds/*.yaml "$chart_crds"/
