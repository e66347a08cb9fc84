#!/usr/bin/env bash
# install-helm.sh builds the Helm CLI that the deploy/ tests lint and render the chart with, from its Go module
# pinned in hack/helm (helm.sh/helm/v4), and prints the binary's path: what the tests' PACKWRIGHT_HELM wants.
# Logs go to stderr.
#
# No binary is downloaded: it builds from the Go module proxy (cold: a few minutes on two cores), into a cache
# outside the clone, ${XDG_CACHE_HOME:-$HOME/.cache}/packwright/helm-<version>/helm, which a fresh clone (CI)
# reuses; once built, a second run prints the path in milliseconds. Concurrent runs wait for each other.
set -euo pipefail

HELM_VERSION="v4.3.2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/packwright"
dest="$cache/helm-$HELM_VERSION"

log() { echo "install-helm: $*" >&2; }
die() { log "error: $*"; exit 1; }
complete() { [ -f "$dest/.complete" ] && [ -x "$dest/helm" ]; }

if complete; then
  echo "$dest/helm"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH: helm builds from its Go module (Go 1.26)"
mkdir -p "$cache" || die "cannot create the cache folder $cache"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/.helm-$HELM_VERSION.lock"
  if ! flock -n 9; then
    log "another run is building $dest; waiting for it"
    flock 9
  fi
  if complete; then
    echo "$dest/helm"
    exit 0
  fi
fi
trap 'log "error: failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR

# The tools module must build as pinned: no workspace, no go.mod rewrites.
export GOWORK=off GOFLAGS="-mod=readonly -trimpath -buildvcs=false" CGO_ENABLED=0

# Without this, helm version reports v4.x of its source default rather than the pinned release.
ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION"

mkdir -p "$dest"
log "building helm $HELM_VERSION (cold: a few minutes on two cores)"
t0=$(date +%s)
(cd "$root/hack/helm" && go build -ldflags "$ldflags" -o "$dest/helm.tmp" helm.sh/helm/v4/cmd/helm)
mv "$dest/helm.tmp" "$dest/helm"

version="$("$dest/helm" version --template '{{.Version}}')"
[ "$version" = "$HELM_VERSION" ] || die "helm reports '$version', want '$HELM_VERSION'"

echo "helm $HELM_VERSION; built $(date -u +%FT%TZ) in $(($(date +%s) - t0)) s" >"$dest/.complete"
log "built in $(($(date +%s) - t0)) s into $dest"
echo "$dest/helm"
