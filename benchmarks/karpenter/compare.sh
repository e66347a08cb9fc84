#!/usr/bin/env bash
# compare.sh runs the benchmark suite with Karpenter's provisioning scheduler as a peer column:
#   1. packwright bench --export writes every workload's problem (consolidation: its cluster) as JSON,
#   2. this module (sigs.k8s.io/karpenter v1.14.1, its own go.mod) schedules each one and writes its plan (for a
#      cluster: the command of one cycle of Karpenter's consolidation methods),
#   3. packwright bench --peer solves the same workloads and validates and reports Karpenter's plans beside.
# Arguments are passed to both packwright bench runs, e.g.: benchmarks/karpenter/compare.sh --sizes 100,1000
# Run it from the repository root after `make build`; PACKWRIGHT (default bin/packwright) names the binary.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${PACKWRIGHT:-$root/bin/packwright}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$bin" bench --export "$work" "$@"
# KARPENTER_CYCLE_BUDGET (default 10m) caps the wall time of one cluster's repeated consolidation cycles.
(cd "$root/benchmarks/karpenter" && go run . -dir "$work" -cycle-budget "${KARPENTER_CYCLE_BUDGET:-10m}")
"$bin" bench --peer "$work" "$@"
