package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/packwright/packwright/benchmarks"
	"github.com/packwright/packwright/cluster"
	"github.com/packwright/packwright/solver"
	"github.com/packwright/packwright/solver/highs"
)

// defaultBenchSizes are the sizes of a quick run; the full suite adds 20000 and 50000.
const defaultBenchSizes = "100,1000,5000"

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizes := fs.String("sizes", defaultBenchSizes, "comma-separated sizes: pending-pod counts, node counts for consolidation (the full suite: 100,1000,5000,20000,50000)")
	workloads := fs.String("workloads", "", "comma-separated workloads (default all: "+strings.Join(benchmarks.WorkloadNames(), ",")+")")
	catalogs := fs.String("catalog", benchmarks.CatalogKwok, "comma-separated catalogs: kwok, aws/us-east-1 (with --snapshot: any catalog spec, default aws/us-east-1)")
	deadline := fs.Duration("deadline", solver.DefaultDeadline, "decision deadline per provisioning workload")
	consDeadline := fs.Duration("consolidation-deadline", benchmarks.ConsolidationDeadline, "decision deadline per consolidation workload")
	solverName := fs.String("solver", string(solver.Auto), "solver of the packwright columns: auto, mip or greedy")
	seed := fs.Int64("seed", benchmarks.DefaultSeed, "workload seed (the same seed gives the same problems)")
	outDir := fs.String("out", filepath.Join("benchmarks", "results"), "directory for report.md, results.json and the PNG charts")
	snapshot := fs.String("snapshot", "", "benchmark this cluster snapshot instead of the generated workloads")
	export := fs.String("export", "", "only write each workload's problem (consolidation: its cluster) to this directory as JSON, for a peer (benchmarks/karpenter), and exit")
	reference := fs.Duration("reference-deadline", 0, "also solve each workload of at most --reference-pods pods with this longer deadline, to bracket the optimum that the decision's plan is measured against (0: off)")
	referencePods := fs.Int("reference-pods", benchmarks.DefaultReferencePods, "largest workload of the reference solve (pending pods)")
	peerDir := fs.String("peer", "", "directory of peer plans (benchmarks/karpenter output) to validate and report beside Packwright's")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: packwright bench [flags]\n\nRuns the benchmark suite: every workload is planned by greedy and by the solver portfolio, every plan is\nvalidated, and a Markdown report with charts is written. Provisioning workloads (size = pending pods):")
		for _, g := range benchmarks.Generators() {
			fmt.Fprintf(stderr, "  %-13s %s\n", g.Name, g.Summary)
		}
		fmt.Fprintln(stderr, "Consolidation workload (size = nodes; decided by solver.Consolidate, greedy only and with the portfolio):")
		fmt.Fprintf(stderr, "  %-13s %s\n", benchmarks.Consolidation, benchmarks.ConsolidationSummary)
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	kind, err := solver.ParseKind(*solverName)
	if err != nil {
		return err
	}
	if *deadline <= 0 {
		return fmt.Errorf("--deadline must be positive (got %s)", *deadline)
	}
	if *consDeadline <= 0 {
		return fmt.Errorf("--consolidation-deadline must be positive (got %s)", *consDeadline)
	}

	var (
		ws  []benchmarks.Workload
		cws []benchmarks.ConsolidationWorkload
	)
	if *snapshot != "" {
		if set["sizes"] || set["workloads"] {
			return fmt.Errorf("--snapshot benchmarks the snapshot as it is; --sizes and --workloads do not apply")
		}
		spec := "aws/us-east-1"
		if set["catalog"] {
			spec = *catalogs
		}
		w, err := snapshotWorkload(*snapshot, spec)
		if err != nil {
			return err
		}
		ws = []benchmarks.Workload{w}
	} else {
		ns, err := parseSizes(*sizes)
		if err != nil {
			return err
		}
		gens, consolidation, err := benchmarks.SplitWorkloadNames(splitList(*workloads))
		if err != nil {
			return err
		}
		if len(gens) > 0 {
			if ws, err = benchmarks.Workloads(gens, ns, splitList(*catalogs), *seed); err != nil {
				return err
			}
		}
		if consolidation {
			if cws, err = benchmarks.ConsolidationWorkloads(ns, splitList(*catalogs), *seed); err != nil {
				return err
			}
		}
	}
	if *export != "" {
		files, err := benchmarks.ExportProblems(*export, ws)
		if err != nil {
			return err
		}
		cfiles, err := benchmarks.ExportConsolidation(*export, cws)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %d problems and %d consolidation clusters to %s\n", len(files), len(cfiles), *export)
		return nil
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}

	bar := newProgressBar(stderr)
	began := time.Now()
	total := len(ws) + len(cws)
	results := benchmarks.Results{}
	var runErr error
	results.Provisioning, runErr = benchmarks.Run(ctx, ws, benchmarks.Options{Deadline: *deadline, Kind: kind, PeerDir: *peerDir,
		Reference: *reference, ReferencePods: *referencePods,
		Progress: func(done, _ int, name string) { bar.update(done, total, name) }})
	if runErr == nil && len(cws) > 0 {
		results.Consolidation, runErr = benchmarks.RunConsolidation(ctx, cws, benchmarks.Options{Deadline: *consDeadline, Kind: kind,
			PeerDir: *peerDir, Progress: func(done, _ int, name string) { bar.update(len(ws)+done, total, name) }})
	}
	bar.done()

	info := benchmarks.ReportInfo{
		Command:  "packwright bench " + strings.Join(args, " "),
		Started:  began,
		Elapsed:  time.Since(began),
		Deadline: *deadline,
		Seed:     *seed,

		Reference:     *reference,
		ReferencePods: *referencePods,

		ConsolidationDeadline: *consDeadline,
		HiGHS:                 "not linked (built without cgo)",
	}
	if highs.Available() {
		info.HiGHS = highs.Version()
	}
	files, err := benchmarks.WriteAll(*outDir, results, info)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(*outDir, f))
	}
	if runErr != nil {
		return runErr
	}
	failed := 0
	for _, r := range results.Provisioning {
		if r.Failed() {
			failed++
			fmt.Fprintf(stderr, "FAIL %s: %s\n", r.Workload, strings.Join(r.Failures, "; "))
		}
	}
	for _, r := range results.Consolidation {
		if r.Failed() {
			failed++
			fmt.Fprintf(stderr, "FAIL %s: %s\n", r.Workload, strings.Join(r.Failures, "; "))
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d workloads failed (see %s)", failed, total, filepath.Join(*outDir, benchmarks.ReportFile))
	}
	return nil
}

// snapshotWorkload reads a snapshot and converts it with the catalog spec into one workload.
func snapshotWorkload(path, spec string) (benchmarks.Workload, error) {
	state, name, err := readState(path, false)
	if err != nil {
		return benchmarks.Workload{}, err
	}
	cat, err := benchmarks.LoadCatalog(spec)
	if err != nil {
		return benchmarks.Workload{}, oneLineErr(err)
	}
	p, _, err := state.Problem(cat, cluster.ProblemOptions{})
	if err != nil {
		return benchmarks.Workload{}, oneLineErr(fmt.Errorf("%s: %w", name, err))
	}
	return benchmarks.ProblemWorkload("snapshot/"+filepath.Base(path), spec, p), nil
}

// parseSizes parses "100,1000,5000".
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--sizes: %q is not a positive pod count", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--sizes: no sizes given")
	}
	return out, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// progressBar draws a one-line progress bar with \r on a terminal and nothing elsewhere, so that redirected
// output and CI logs stay clean.
type progressBar struct {
	w       io.Writer
	enabled bool
	width   int // of the last line, to blank it
}

func newProgressBar(w io.Writer) *progressBar {
	return &progressBar{w: w, enabled: isTerminal(w)}
}

func (b *progressBar) update(done, total int, name string) {
	if !b.enabled || total == 0 {
		return
	}
	const cells = 30
	filled := cells * done / total
	line := fmt.Sprintf("[%s%s] %d/%d %s", strings.Repeat("=", filled), strings.Repeat(" ", cells-filled), done, total, name)
	pad := max(b.width-len(line), 0)
	fmt.Fprintf(b.w, "\r%s%s", line, strings.Repeat(" ", pad))
	b.width = len(line)
}

// done clears the bar's line.
func (b *progressBar) done() {
	if b.enabled && b.width > 0 {
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", b.width))
		b.width = 0
	}
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
