package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/cluster"
	"github.com/packwright/packwright/solver"
)

// stdin is what `--snapshot -` reads; tests replace it.
var stdin io.Reader = os.Stdin

// sampleInput names the embedded sample snapshot in output.
const sampleInput = "the embedded sample snapshot"

// planFlags are the flags of `packwright plan` that `packwright bench --snapshot` shares.
type planFlags struct {
	snapshot    string
	kubeconfig  string
	kubecontext string
	catalog     string
	deadline    time.Duration
	solver      string
	ignoreKinds bool
	output      string
	compare     bool
	consolidate bool
	verbose     bool
	spotToSpot  bool
	at          string
	solverKind  solver.Kind
}

func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f planFlags
	fs.StringVar(&f.snapshot, "snapshot", "", "cluster snapshot to plan: a YAML or JSON file, or - for stdin (default: the embedded sample snapshot)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "plan a live cluster (read only) through this kubeconfig file instead of a snapshot")
	fs.StringVar(&f.kubecontext, "context", "", "with --kubeconfig: the context to use (default: the kubeconfig's current context)")
	fs.StringVar(&f.catalog, "catalog", "aws/us-east-1", "instance-type catalog: aws/REGION (embedded), synthetic/kwok, or a catalog file")
	fs.DurationVar(&f.deadline, "deadline", solver.DefaultDeadline, "decision deadline; the greedy plan is used when the MIP cannot finish")
	fs.StringVar(&f.solver, "solver", string(solver.Auto), "solver: auto (greedy, then the MIP when HiGHS is linked), mip (fail without HiGHS) or greedy")
	fs.StringVar(&f.output, "o", "table", "output format: table or json (docs/plan-format.md)")
	fs.BoolVar(&f.compare, "compare", false, "also repack every pod from scratch (existing nodes removed) and report the saving against the current cluster")
	fs.BoolVar(&f.consolidate, "consolidate", false, "plan consolidation instead: which existing nodes to remove or replace, and what to launch instead")
	fs.BoolVar(&f.verbose, "v", false, "with --consolidate: list every pod moved")
	fs.BoolVar(&f.spotToSpot, "spot-to-spot", false, "with --consolidate: allow replacing spot nodes by cheaper spot nodes (as the controller's --spot-to-spot-consolidation)")
	fs.StringVar(&f.at, "at", "", "with --consolidate: evaluate disruption budgets' schedules and NodeClaims' expireAfter at this RFC 3339 time (default now)")
	fs.BoolVar(&f.ignoreKinds, "ignore-unknown-kinds", false, "skip objects of kinds planning does not use (e.g. the output of kubectl get all) instead of failing")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: packwright plan [flags]\n\nPlans the nodes to launch for a cluster snapshot's pending pods (what-if; nothing is changed).\nWith --consolidate, plans which existing nodes to remove or replace instead (docs/plan-format.md).\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (the snapshot is given with --snapshot)", fs.Arg(0))
	}
	if f.output != "table" && f.output != "json" {
		return fmt.Errorf("unknown output format %q (want table or json)", f.output)
	}
	if f.consolidate && f.compare {
		return errors.New("--consolidate and --compare are exclusive")
	}
	if (f.verbose || f.spotToSpot || f.at != "") && !f.consolidate {
		return errors.New("-v, --spot-to-spot and --at apply only with --consolidate")
	}
	kind, err := solver.ParseKind(f.solver)
	if err != nil {
		return err
	}
	f.solverKind = kind
	if f.deadline <= 0 {
		return fmt.Errorf("--deadline must be positive (got %s)", f.deadline)
	}

	var (
		state *cluster.State
		input string
	)
	if f.kubeconfig != "" || f.kubecontext != "" {
		if f.snapshot != "" {
			return fmt.Errorf("--snapshot and --kubeconfig are exclusive: plan a snapshot or a live cluster")
		}
		state, input, err = readLive(ctx, cluster.LiveOptions{Kubeconfig: f.kubeconfig, Context: f.kubecontext})
	} else {
		state, input, err = readState(f.snapshot, f.ignoreKinds)
	}
	if err != nil {
		return err
	}
	cat, err := catalog.Resolve(f.catalog)
	if err != nil {
		return oneLineErr(err)
	}
	if f.consolidate {
		return runConsolidate(ctx, state, input, cat, f, stdout)
	}
	p, issues, err := state.Problem(cat, cluster.ProblemOptions{})
	if err != nil {
		return oneLineErr(fmt.Errorf("%s: %w", input, err))
	}
	pl, err := solver.Solve(ctx, p, solver.Options{Deadline: f.deadline, Kind: kind})
	if err != nil {
		return oneLineErr(err)
	}
	rep := &tableReport{input: input, catalog: f.catalog, view: newPlanView(p, pl), issues: issues}
	if f.compare {
		c, err := compareRepack(ctx, state, cat, rep.view, f)
		if err != nil {
			return oneLineErr(err)
		}
		rep.compare = c
	}
	if f.output == "json" {
		return writeJSON(stdout, rep)
	}
	return writeTable(stdout, rep)
}

// runConsolidate solves consolidation for state and writes the report in the format f asks for.
func runConsolidate(ctx context.Context, state *cluster.State, input string, cat *catalog.Catalog, f planFlags, stdout io.Writer) error {
	var at time.Time
	if f.at != "" {
		var err error
		if at, err = time.Parse(time.RFC3339, f.at); err != nil {
			return fmt.Errorf("--at %q: want an RFC 3339 time such as 2026-06-01T02:00:00Z", f.at)
		}
	}
	in, not, issues, err := state.ConsolidationInput(cat, cluster.ProblemOptions{Now: at})
	if err != nil {
		return oneLineErr(fmt.Errorf("%s: %w", input, err))
	}
	// cluster speaks model only (DESIGN.md: it does not import the solver); the solver's input is the same pieces.
	sin := &solver.ConsolidationInput{Problem: in.Problem, Candidates: in.Candidates, Origin: in.Origin, Forced: in.Forced}
	res, err := solver.Consolidate(ctx, sin, solver.ConsolidationOptions{
		Solve:      solver.Options{Deadline: f.deadline, Kind: f.solverKind},
		MaxRemoved: in.MaxRemoved,
		SpotToSpot: f.spotToSpot,
	})
	if err != nil {
		return oneLineErr(fmt.Errorf("%s: %w", input, err))
	}
	rep := newConsolidationReport(input, f.catalog, in, res, not, issues)
	if f.output == "json" {
		return writeConsolidationJSON(stdout, rep)
	}
	return writeConsolidationTable(stdout, rep, f.verbose)
}

// readLive lists a live cluster's objects; it only reads.
func readLive(ctx context.Context, o cluster.LiveOptions) (*cluster.State, string, error) {
	cfg, err := o.RESTConfig()
	if err != nil {
		return nil, "", oneLineErr(err)
	}
	s, err := cluster.ReadLive(ctx, cfg)
	if err != nil {
		return nil, "", oneLineErr(err)
	}
	return s, "cluster " + cfg.Host, nil
}

// readState reads the snapshot that path names ("" for the embedded sample, "-" for stdin) and returns it with
// a name for it in output.
func readState(path string, ignoreUnknownKinds bool) (*cluster.State, string, error) {
	opts := cluster.ReadOptions{IgnoreUnknownKinds: ignoreUnknownKinds}
	var (
		r    io.Reader
		name string
	)
	switch path {
	case "":
		r, name = bytes.NewReader(cluster.SampleSnapshot), sampleInput
	case "-":
		r, name = stdin, "stdin"
	default:
		data, err := os.ReadFile(path)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is in our own message already
			}
			return nil, "", fmt.Errorf("snapshot %s: %w", path, err)
		}
		r, name = bytes.NewReader(data), path
	}
	s, err := opts.Read(r)
	if err != nil {
		return nil, "", oneLineErr(fmt.Errorf("snapshot %s: %w", name, err))
	}
	return s, name, nil
}

// comparison holds the plan of the cluster as it is and the plan of every pod repacked from scratch.
type comparison struct {
	existingHourly float64
	// unpriced are existing nodes that the catalog could not price (their cost counts as 0).
	unpriced []string
	current  *planView
	repacked *planView
	// moved is the number of bound pods that the repack turned pending.
	moved int
}

// currentHourly is what the cluster costs after this plan: every existing node plus the new ones.
func (c *comparison) currentHourly() float64 { return c.existingHourly + c.current.plan.Cost }

func (c *comparison) saving() float64 { return c.currentHourly() - c.repacked.plan.Cost }

func (c *comparison) savingFraction() float64 {
	if c.currentHourly() <= 0 {
		return 0
	}
	return c.saving() / c.currentHourly()
}

// compareRepack plans every pod of state (pending and bound, except DaemonSet and mirror pods, which follow the
// nodes) onto new nodes only, as if the cluster were built from scratch.
func compareRepack(ctx context.Context, state *cluster.State, cat *catalog.Catalog, current *planView, f planFlags) (*comparison, error) {
	rs, moved, err := repackState(state)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	rp, _, err := rs.Problem(cat, cluster.ProblemOptions{})
	if err != nil {
		return nil, fmt.Errorf("compare: repacked problem: %w", err)
	}
	pl, err := solver.Solve(ctx, rp, solver.Options{Deadline: f.deadline, Kind: f.solverKind})
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	c := &comparison{current: current, repacked: newPlanView(rp, pl), moved: moved}
	for _, n := range current.problem.Nodes {
		c.existingHourly += n.Price
		if n.Price == 0 {
			c.unpriced = append(c.unpriced, n.Name)
		}
	}
	return c, nil
}

// repackState returns a copy of s without nodes (and node claims), whose bound pods are pending again. Pods
// that belong to a node rather than to the workload (DaemonSet pods, static pods' mirrors) and finished pods are
// left out. The State's objects are not modified.
func repackState(s *cluster.State) (*cluster.State, int, error) {
	var objs []runtime.Object
	moved := 0
	for _, pod := range s.Pods {
		if pod.Spec.NodeName == "" {
			objs = append(objs, pod)
			continue
		}
		if cluster.IsDaemonSetPod(pod) || isMirrorPod(pod) || pod.DeletionTimestamp != nil ||
			pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		c := pod.DeepCopy()
		c.Spec.NodeName = ""
		c.Status = corev1.PodStatus{Phase: corev1.PodPending}
		objs = append(objs, c)
		moved++
	}
	for _, ds := range s.DaemonSets {
		objs = append(objs, ds)
	}
	for _, pdb := range s.PodDisruptionBudgets {
		objs = append(objs, pdb)
	}
	for _, np := range s.NodePools {
		objs = append(objs, np)
	}
	out, err := cluster.NewState(objs...)
	if err != nil {
		return nil, 0, fmt.Errorf("repack: %w", err)
	}
	return out, moved, nil
}

// isMirrorPod reports whether pod is the API server's mirror of a static pod, which the kubelet of its node runs
// and which cannot move.
func isMirrorPod(pod *corev1.Pod) bool {
	if _, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return true
	}
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.Kind == "Node"
}

// writeComparison appends the --compare section of the table.
func writeComparison(b *strings.Builder, c *comparison) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	rp := c.repacked.plan
	p("\nCompare with repacking from scratch (existing nodes removed, their %d pods pending again):\n", c.moved)
	p("  current   $%.4f/hour  $%.2f/month  %d existing nodes ($%.4f/h) + %d new ($%.4f/h)\n",
		c.currentHourly(), c.currentHourly()*hoursPerMonth, len(c.current.problem.Nodes), c.existingHourly,
		len(c.current.plan.NewNodes), c.current.plan.Cost)
	p("  repacked  $%.4f/hour  $%.2f/month  %d new nodes for %d pods; %s, %s",
		rp.Cost, rp.Cost*hoursPerMonth, len(rp.NewNodes), c.repacked.pending, rp.Solver, rp.Status)
	if rp.LowerBound > 0 {
		p(", gap %.2f%%", 100*rp.Gap())
	}
	p("\n  saving    $%.4f/hour  $%.2f/month  (%.1f%%)\n", c.saving(), c.saving()*hoursPerMonth, 100*c.savingFraction())
	if len(c.unpriced) > 0 {
		p("  note: %d existing nodes have no catalog price and count as $0: %s\n", len(c.unpriced), strings.Join(c.unpriced, ", "))
	}
	if cu, ru := c.current.unschedulable(), c.repacked.unschedulable(); ru != cu {
		p("  note: %d pods stay unschedulable when repacked against %d now, so the costs place different pods\n", ru, cu)
	}
}

// oneLineErr flattens a multi-line error (errors.Join) into one line, so that the command's error is one line.
func oneLineErr(err error) error {
	if err == nil || !strings.Contains(err.Error(), "\n") {
		return err
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) > 4 {
		lines = append(lines[:4], fmt.Sprintf("and %d more", len(lines)-4))
	}
	return errors.New(strings.Join(lines, "; "))
}

// roundDuration rounds for display: milliseconds under a minute.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
