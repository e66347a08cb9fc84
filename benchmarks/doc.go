// Package benchmarks is Packwright's benchmark suite: seeded, reproducible workload generators that build
// model.Problems of a given size, a harness that plans each one with the greedy first-fit solver and with the
// solver portfolio (greedy + HiGHS MIP) and checks every plan with model.Plan.Validate, and a Markdown report
// with PNG charts of the results.
//
// Every generator is a pure function of its seed and size: the same (generator, pods, catalog, seed) gives the
// same problem, pod for pod, on every machine, so figures from different runs compare. docs/benchmarks.md
// describes each generator and the price models.
//
// Consolidation workloads (GenerateConsolidation, RunConsolidation) are over-provisioned clusters of existing
// nodes, decided by solver.Consolidate greedy only and with the portfolio; every decision is checked too.
//
// The suite runs three ways: `packwright bench` (report.md and charts), `go test -bench . ./benchmarks`
// (BenchmarkSolve/<workload> reporting cost, lower bound and gap as custom metrics) and the harness API (Run).
package benchmarks
