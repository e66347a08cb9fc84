package benchmarks

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"time"
)

// ReportInfo describes the run in the report's header, so that a report says how to reproduce it.
type ReportInfo struct {
	// Command is the command line that made the report.
	Command  string
	Started  time.Time
	Elapsed  time.Duration
	Deadline time.Duration
	Seed     int64
	// HiGHS is the linked HiGHS version, or why there is none.
	HiGHS string
	// ConsolidationDeadline is the deadline of the consolidation decisions.
	ConsolidationDeadline time.Duration
	// Reference and ReferencePods are the reference solve's deadline (0: none) and largest workload (see
	// Options.Reference).
	Reference     time.Duration
	ReferencePods int
	// Charts are the PNG file names (relative to the report) to show at the end.
	Charts []string
}

// series identifies one table and one line of each chart: a generator on a catalog.
type series struct{ generator, catalog string }

// String is the series' heading and legend entry, e.g. "web (kwok)".
func (s series) String() string { return s.generator + " (" + s.catalog + ")" }

// seriesOf groups results by series, in order of first appearance, each series' results by ascending pods.
func seriesOf(rs []Result) ([]series, map[series][]Result) {
	var order []series
	by := map[series][]Result{}
	for _, r := range rs {
		s := series{r.Generator, r.Catalog}
		if _, ok := by[s]; !ok {
			order = append(order, s)
		}
		by[s] = append(by[s], r)
	}
	for _, s := range order {
		sortByPods(by[s])
	}
	return order, by
}

func sortByPods(rs []Result) {
	for i := 1; i < len(rs); i++ { // insertion sort: stable and the lists are tiny
		for j := i; j > 0 && rs[j].Pods < rs[j-1].Pods; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// WriteReport writes the Markdown report: the run's header, one table per generator and catalog (pods, greedy
// and Packwright cost, lower bound, gap, saving, times and status), the reasons behind fallbacks, the
// consolidation table, every failure, and the charts.
func WriteReport(w io.Writer, all Results, info ReportInfo) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	rs := all.Provisioning
	failed := all.failed()
	p("# Packwright benchmark report\n\n")
	if info.Command != "" {
		p("`%s`\n\n", info.Command)
	}
	if !info.Started.IsZero() {
		p("- Run: %s, %s in all\n", info.Started.UTC().Format("2006-01-02 15:04 MST"), info.Elapsed.Round(time.Second))
	}
	p("- Machine: %s/%s, %d CPUs, %s, HiGHS %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), orDash(info.HiGHS))
	if len(rs) > 0 {
		p("- Decision deadline %s, seed %d; costs are USD per hour of the new nodes\n", info.Deadline, info.Seed)
	} else {
		p("- Seed %d\n", info.Seed)
	}
	if len(all.Consolidation) > 0 {
		p("- Consolidation deadline %s; costs are USD per hour of the whole cluster\n", orZero(info.ConsolidationDeadline))
	}
	p("- %d workloads, %d failed\n\n", len(rs)+len(all.Consolidation), failed)
	p("*greedy* is `greedy.Solve` alone; *packwright* is `solver.Solve` (greedy, then the HiGHS MIP until the deadline, with " +
		"greedy's local search beside it from 500 pods; the cheapest valid plan wins). *lower bound* is the best proven bound, *gap* = (packwright - bound) / packwright, " +
		"*saving* = (greedy - packwright) / greedy. Every plan is checked with `model.Plan.Validate`.\n\n")
	if info.Reference > 0 {
		p("*optimum* brackets the true optimum of the workloads of up to %d pods: the best bound and the cheapest plan of "+
			"the decision and of a second `solver.Solve` with a %s deadline (one value when they meet, the optimum then being "+
			"proven); *above optimum* is (packwright - optimum) / packwright, or at most its distance to the best bound.\n\n",
			cmp.Or(info.ReferencePods, DefaultReferencePods), info.Reference)
	}

	order, by := seriesOf(rs)
	for _, s := range order {
		rows := by[s]
		p("## %s\n\n", s)
		if g, err := LookupGenerator(s.generator); err == nil {
			p("%s. ", capitalise(g.Summary))
		}
		r0 := rows[0]
		p("%d offerings", r0.Offerings)
		if r0.ExistingNodes > 0 {
			var counts []string
			for _, r := range rows {
				counts = append(counts, fmt.Sprintf("%d at %d pods", r.ExistingNodes, r.Pods))
			}
			p("; existing nodes: %s", strings.Join(counts, ", "))
		}
		p(".\n\n")
		peer, ref := hasPeer(rows), hasReference(rows)
		p("| pods | groups | greedy $/h | packwright $/h | lower bound $/h | gap %% | saving %% | greedy ms | packwright ms | nodes | status |")
		if ref {
			p(" optimum $/h | above optimum %% |")
		}
		if peer {
			p(" karpenter $/h | karpenter ms | karpenter nodes | packwright vs karpenter %% |")
		}
		p("\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
		if ref {
			p("---:|---:|")
		}
		if peer {
			p("---:|---:|---:|---:|")
		}
		p("\n")
		var notes, peerNotes []string
		for _, r := range rows {
			status := r.Packwright.Status
			if r.Packwright.Unschedulable > 0 {
				status += fmt.Sprintf(", %d unschedulable", r.Packwright.Unschedulable)
			}
			if r.Failed() {
				status = "**FAIL** " + status
			} else if len(r.Warnings) > 0 {
				status += " (see warnings)"
			}
			p("| %d | %d | %s | %s | %s | %s | %s | %.1f | %.0f | %d | %s |",
				r.Pods, r.Groups, money(r.Greedy), money(r.Packwright), bound(r.Packwright), gapCell(r.Packwright),
				savingCell(r), ms(r.Greedy.Duration), ms(r.Packwright.Duration), r.Packwright.NewNodes, status)
			if ref {
				p(" %s |", optimumCells(r))
			}
			if peer {
				p(" %s |", peerCells(r))
			}
			p("\n")
			if r.Packwright.StatusReason != "" && r.Packwright.Status != "optimal" && r.Packwright.Status != "within-gap" {
				notes = append(notes, fmt.Sprintf("- %d pods: %s", r.Pods, r.Packwright.StatusReason))
			}
			if r.Peer != nil && r.Peer.Status == "error" {
				peerNotes = append(peerNotes, fmt.Sprintf("- %d pods: %s", r.Pods, r.Peer.Err))
			}
		}
		p("\n")
		if len(notes) > 0 {
			p("Why the greedy plan was kept:\n\n%s\n\n", strings.Join(notes, "\n"))
		}
		if len(peerNotes) > 0 {
			p("Why Karpenter was not run:\n\n%s\n\n", strings.Join(peerNotes, "\n"))
		}
	}

	if len(all.Consolidation) > 0 {
		writeConsolidation(p, all.Consolidation)
	}

	p("## Failures\n\n")
	if failed == 0 {
		p("None: every plan validated, and the portfolio was never worse than greedy.\n\n")
	}
	for _, r := range rs {
		for _, f := range r.Failures {
			p("- `%s`: %s\n", r.Workload, f)
		}
	}
	for _, r := range all.Consolidation {
		for _, f := range r.Failures {
			p("- `%s`: %s\n", r.Workload, f)
		}
	}
	if failed > 0 {
		p("\n")
	}
	warned := false
	warn := func(workload string, ws []string) {
		for _, w := range ws {
			if !warned {
				p("## Warnings\n\n")
				warned = true
			}
			p("- `%s`: %s\n", workload, w)
		}
	}
	for _, r := range rs {
		warn(r.Workload, r.Warnings)
	}
	for _, r := range all.Consolidation {
		warn(r.Workload, r.Warnings)
	}
	if warned {
		p("\n")
	}
	if len(info.Charts) > 0 {
		p("## Charts\n\n")
		for _, c := range info.Charts {
			p("![%s](%s)\n\n", strings.TrimSuffix(c, ".png"), c)
		}
	}
	return bw.Flush()
}

func hasReference(rs []Result) bool {
	for _, r := range rs {
		if r.Reference != nil {
			return true
		}
	}
	return false
}

// optimumCells are the optimum (a value when known, else the range between the best bound and the cheapest
// plan) and the plan's distance above it (exact, or "≤" the distance to the best bound).
func optimumCells(r Result) string {
	if r.Reference == nil {
		return "— | —"
	}
	lo, hi, ok := r.Optimum()
	frac, exact, _ := r.AboveOptimum()
	switch {
	case !ok:
		return "— | —"
	case exact:
		return fmt.Sprintf("%.4f | %.2f", hi, 100*frac)
	}
	return fmt.Sprintf("%.4f–%.4f | ≤ %.2f", lo, hi, 100*frac)
}

func hasPeer(rs []Result) bool {
	for _, r := range rs {
		if r.Peer != nil {
			return true
		}
	}
	return false
}

// peerCells are the peer's columns: cost, time, nodes and how much cheaper Packwright is, in percent of the
// peer's cost (negative when the peer is cheaper).
func peerCells(r Result) string {
	o := r.Peer
	switch {
	case o == nil:
		return "— | — | — | —"
	case o.Status == "error":
		return "not run | — | — | —"
	case o.Err != "":
		return fmt.Sprintf("invalid %.4f | %.0f | %d | —", o.Cost, ms(o.Duration), o.NewNodes)
	}
	vs := "—"
	if o.Cost > 0 && r.Packwright.Status != "error" && o.Placed == r.Packwright.Placed {
		vs = fmt.Sprintf("%.2f", 100*(o.Cost-r.Packwright.Cost)/o.Cost)
	}
	return fmt.Sprintf("%.4f | %.0f | %d | %s", o.Cost, ms(o.Duration), o.NewNodes, vs)
}

func money(o Outcome) string {
	if o.Status == "error" {
		return "—"
	}
	return fmt.Sprintf("%.4f", o.Cost)
}

func bound(o Outcome) string {
	if o.Status == "error" || o.LowerBound <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.4f", o.LowerBound)
}

// gapCell is the gap in percent, or a dash when there is no plan or no bound (a gap against 0 means nothing).
func gapCell(o Outcome) string {
	if o.Status == "error" || o.LowerBound <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", 100*o.Gap)
}

func savingCell(r Result) string {
	if r.Greedy.Status == "error" || r.Packwright.Status == "error" {
		return "—"
	}
	v := 100 * r.Saving()
	if math.Abs(v) < 0.005 {
		v = 0 // costs equal up to rounding: 0.00, not -0.00
	}
	return fmt.Sprintf("%.2f", v)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func orZero(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	return d.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
