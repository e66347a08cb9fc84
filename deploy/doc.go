// Package deploy holds the manifests that install Packwright: the CRDs (crds/), plain manifests listed by
// kustomization.yaml, and the Helm chart (helm/packwright). Its tests parse them, check their security settings,
// lint and render the chart, and apply both to a real API server, where the controller's ServiceAccount is
// checked to hold the permissions the code needs and no others, and the whole controller runs as it.
package deploy
