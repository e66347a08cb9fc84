// Package helm pins the Helm CLI that the deploy/ tests lint and render the chart with; hack/install-helm.sh
// builds it from this module, so its dependencies stay out of the main module.
package helm
