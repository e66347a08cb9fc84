// Package tools pins the code generators that hack/generate.sh runs (controller-gen). It is a separate module
// so that the generators' dependencies never enter the main module's go.mod.
package tools
