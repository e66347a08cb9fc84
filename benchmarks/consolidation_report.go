package benchmarks

import (
	"fmt"
	"slices"
	"strings"
)

// writeConsolidation writes the consolidation tables, one per catalog: a row per workload and solver (greedy,
// packwright and the peer when there is one) with the cluster's cost before and after, the bound, gap, what
// the decision removes, launches and moves, its time and whether it validated.
func writeConsolidation(p func(string, ...any), rs []ConsolidationResult) {
	var catalogs []string
	by := map[string][]ConsolidationResult{}
	for _, r := range rs {
		if _, ok := by[r.Catalog]; !ok {
			catalogs = append(catalogs, r.Catalog)
		}
		by[r.Catalog] = append(by[r.Catalog], r)
	}
	for _, c := range catalogs {
		rows := by[c]
		slices.SortStableFunc(rows, func(a, b ConsolidationResult) int { return a.Nodes - b.Nodes })
		peer := slices.ContainsFunc(rows, func(r ConsolidationResult) bool { return len(r.Peers) > 0 })
		p("## %s (%s)\n\n", Consolidation, c)
		p("%s. Costs are USD per hour of the whole cluster; *gap* = (after - bound) / after, *saving* = "+
			"(before - after) / before; *valid* says the decision's plan passed `model.Plan.Validate` against the "+
			"decision's model and its figures are consistent.\n\n", capitalise(ConsolidationSummary))
		p("| nodes | pinned | pods | groups | solver | before $/h | after $/h | lower bound $/h | gap %% | saving %% | removed | launched | moved | ms | valid | status |")
		if peer {
			p(" packwright vs karpenter %% |")
		}
		p("\n|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
		if peer {
			p("---:|")
		}
		p("\n")
		var notes []string
		for _, r := range rows {
			outs := []*ConsolidationOutcome{&r.Greedy, &r.Packwright}
			for i := range r.Peers {
				outs = append(outs, &r.Peers[i])
			}
			for i, o := range outs {
				// A failure is Packwright's (greedy's or the portfolio's); a bad peer decision is only a warning.
				p("| %d | %d | %d | %d | %s | %s |", r.Nodes, r.Pinned, r.Pods, r.Groups, o.Solver,
					consolidationCells(o, r.Failed() && i < 2))
				if peer {
					// On a peer's row: how much cheaper Packwright's cluster after is than the peer's.
					vs := "—"
					if i >= 2 && o.Valid && r.Packwright.Valid && o.CostAfter > 0 {
						vs = fmt.Sprintf("%.2f", 100*(o.CostAfter-r.Packwright.CostAfter)/o.CostAfter)
					}
					p(" %s |", vs)
				}
				p("\n")
				if o.Err != "" {
					notes = append(notes, fmt.Sprintf("- %d nodes, %s: %s", r.Nodes, o.Solver, o.Err))
				} else if o.Reason != "" {
					notes = append(notes, fmt.Sprintf("- %d nodes, %s: %s", r.Nodes, o.Solver, o.Reason))
				}
			}
		}
		p("\n")
		if len(notes) > 0 {
			p("Notes:\n\n%s\n\n", strings.Join(notes, "\n"))
		}
	}
}

// consolidationCells are a decision's columns from "before $/h" to "status".
// fail marks the status **FAIL**.
func consolidationCells(o *ConsolidationOutcome, fail bool) string {
	status := o.Status
	if o.Status != "error" && !o.Act {
		status += ", no action"
	}
	if fail {
		status = "**FAIL** " + status
	}
	if o.Status == "error" {
		return fmt.Sprintf("%.4f | — | — | — | — | — | — | — | %.0f | — | %s", o.CostBefore, ms(o.Duration), status)
	}
	lb, gap := "—", "—"
	if o.LowerBound > 0 {
		lb, gap = fmt.Sprintf("%.4f", o.LowerBound), fmt.Sprintf("%.2f", 100*o.Gap)
	}
	saving := 0.0
	if o.CostBefore > 0 {
		saving = 100 * (o.CostBefore - o.CostAfter) / o.CostBefore
	}
	valid := "yes"
	if !o.Valid {
		valid = "**no**"
	}
	return fmt.Sprintf("%.4f | %.4f | %s | %s | %.2f | %d | %d | %d | %.0f | %s | %s",
		o.CostBefore, o.CostAfter, lb, gap, saving, o.Removed, o.Launched, o.Moved, ms(o.Duration), valid, status)
}
