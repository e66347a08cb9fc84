// Command karpenter runs Karpenter's provisioning scheduler (sigs.k8s.io/karpenter v1.14.1) on problems that
// `packwright bench --export DIR` wrote, as a peer baseline for Packwright's benchmarks. For each
// DIR/<slug>.problem.json it writes DIR/<slug>.karpenter.json: Karpenter's NodeClaims as a Packwright plan, each
// priced at the cheapest offering its requirements and instance-type options allow (the kwok provider's launch
// choice; on AWS, CreateFleet's lowest-price on-demand choice), which `packwright bench --peer DIR` validates
// and reports. For each DIR/<slug>.consolidation.json (a cluster to consolidate) it runs one cycle of Karpenter's
// disruption controller's consolidation methods and writes the first command as DIR/<slug>.karpenter.json (see
// consolidate.go). It is its own module because Karpenter v1.14 builds against k8s.io v0.35 and Packwright against
// v0.37.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/logging"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/test"
)

func main() {
	dir := flag.String("dir", "", "directory of <slug>.problem.json files (packwright bench --export DIR); results are written beside them")
	flag.DurationVar(&cycleBudget, "cycle-budget", cycleBudget, "wall time after which a cluster's repeated consolidation cycles stop (the decision says so)")
	flag.Parse()
	if *dir == "" || flag.NArg() > 0 || cycleBudget <= 0 {
		fmt.Fprintln(os.Stderr, "usage: karpenter -dir DIR [-cycle-budget 10m]")
		os.Exit(2)
	}
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "karpenter:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	log.SetLogger(logging.NopLogger)
	files, err := filepath.Glob(filepath.Join(dir, "*.problem.json"))
	if err != nil {
		return err
	}
	clusters, err := filepath.Glob(filepath.Join(dir, "*.consolidation.json"))
	if err != nil {
		return err
	}
	if len(files)+len(clusters) == 0 {
		return fmt.Errorf("no *.problem.json or *.consolidation.json in %s (write them with packwright bench --export %s)", dir, dir)
	}
	sort.Strings(files)
	peer := "karpenter " + karpenterVersion()
	for _, f := range files {
		pf, err := readProblem(f)
		if err != nil {
			return err
		}
		out := solve(pf)
		out.Peer = peer
		data, err := json.Marshal(out)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		dst := strings.TrimSuffix(f, ".problem.json") + ".karpenter.json"
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
		status := fmt.Sprintf("%d nodes, $%.4f/h", len(out.Plan.nodes()), out.Plan.cost())
		if out.Error != "" {
			status = "not run: " + out.Error
		}
		fmt.Printf("%-32s %8s  %s\n", pf.Workload, time.Duration(out.DurationNs).Round(time.Millisecond), status)
	}
	sort.Strings(clusters)
	for _, f := range clusters {
		cf, err := readConsolidation(f)
		if err != nil {
			return err
		}
		out := consolidate(cf)
		out.Peer = peer
		data, err := json.Marshal(out)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		dst := strings.TrimSuffix(f, ".consolidation.json") + ".karpenter.json"
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
		if out.Error != "" {
			fmt.Printf("%-32s %8s  not run: %s\n", cf.Workload, "", out.Error)
		}
		for _, d := range out.Decisions {
			fmt.Printf("%-32s %8s  %s: %d removed, %d launched\n", cf.Workload, time.Duration(d.DurationNs).Round(time.Millisecond),
				d.Method, len(d.Removed), len(d.NewNodes))
		}
	}
	return nil
}

func readConsolidation(path string) (*consolidationFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cf consolidationFile
	if err := json.Unmarshal(data, &cf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if cf.Problem == nil {
		return nil, fmt.Errorf("%s: no problem", path)
	}
	return &cf, nil
}

func readProblem(path string) (*problemFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pf problemFile
	if err := json.Unmarshal(data, &pf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if pf.Problem == nil {
		return nil, fmt.Errorf("%s: no problem", path)
	}
	return &pf, nil
}

// solve runs Karpenter's scheduler on one problem; a failure is recorded in the result, not returned.
func solve(pf *problemFile) peerFile {
	out := peerFile{Workload: pf.Workload}
	if why := unsupported(pf.Problem); why != "" {
		out.Error = why
		return out
	}
	in, err := translate(pf.Problem)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	began := time.Now()
	results, err := schedule(in)
	out.DurationNs = int64(time.Since(began))
	if err != nil {
		out.Error = "scheduler: " + err.Error()
		return out
	}
	pl, err := toPlan(pf.Problem, in, results)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	pl.Duration = time.Duration(out.DurationNs)
	out.Plan = pl
	return out
}

// schedule sets up a scheduler over a fake client and cloud provider, as Karpenter's own scheduling benchmark
// does, and solves once. Setup is outside the measured time only in so far as the caller measures; it is cheap.
func schedule(in *input) (scheduling.Results, error) {
	ctx := options.ToContext(injection.WithControllerName(context.Background(), "provisioner"), test.Options())
	cp := fake.NewCloudProvider()
	for _, its := range in.instanceTypes {
		cp.InstanceTypes = append(cp.InstanceTypes, its...)
	}
	cp.InstanceTypesForNodePool = in.instanceTypes
	client := fakecr.NewFakeClient()
	clk := &clock.RealClock{}
	cluster := state.NewCluster(clk, client, cp)
	topology, err := scheduling.NewTopology(ctx, client, cluster, nil, in.nodePools, in.instanceTypes, in.pods)
	if err != nil {
		return scheduling.Results{}, fmt.Errorf("topology: %w", err)
	}
	s := scheduling.NewScheduler(ctx, client, in.nodePools, cluster, nil, topology, in.instanceTypes, nil,
		events.NewRecorder(&record.FakeRecorder{}), clk, nil, nil)
	results, err := s.Solve(ctx, in.pods)
	if err != nil {
		return results, err
	}
	// As the provisioner does before it creates NodeClaims.
	return results.TruncateInstanceTypes(ctx, scheduling.MaxInstanceTypes), nil
}

// cheapest is the index of the cheapest available offering compatible with nc's requirements among its
// instance-type options: how both peers price a NodeClaim (what the kwok provider launches, and what CreateFleet
// picks for on-demand).
func (in *input) cheapest(nc *scheduling.NodeClaim) (int, error) {
	var best *cloudprovider.Offering
	var bestType *cloudprovider.InstanceType
	for _, it := range nc.InstanceTypeOptions {
		if o := it.Offerings.Available().Compatible(nc.Requirements).Cheapest(); o != nil && (best == nil || o.Price < best.Price) {
			best, bestType = o, it
		}
	}
	if best == nil {
		return 0, fmt.Errorf("NodeClaim for %d pods has no available compatible offering", len(nc.Pods))
	}
	key := offeringKey(nc.NodePoolName, bestType.Name, best.Requirements.Get(labelZone).Any(), best.Requirements.Get(v1.CapacityTypeLabelKey).Any())
	oi, ok := in.offeringOf[key]
	if !ok {
		return 0, fmt.Errorf("NodeClaim priced at %s, which is no offering of the problem", key)
	}
	return oi, nil
}

// toPlan converts Karpenter's NodeClaims into a Packwright plan: each NodeClaim becomes the cheapest available
// offering compatible with its requirements among its instance-type options, holding its pods by group.
func toPlan(p *problem, in *input, r scheduling.Results) (*plan, error) {
	pl := &plan{Status: "karpenter", Solver: "karpenter"}
	for _, nc := range r.NewNodeClaims {
		oi, err := in.cheapest(nc)
		if err != nil {
			return nil, err
		}
		counts := map[int]int{}
		for _, pod := range nc.Pods {
			counts[in.groupOf[pod.UID]]++
		}
		nn := newNode{Offering: oi}
		for _, g := range sortedKeys(counts) {
			nn.Pods = append(nn.Pods, groupCount{Group: g, Count: counts[g]})
		}
		pl.NewNodes = append(pl.NewNodes, nn)
		pl.Cost += p.Offerings[oi].Price
	}
	if len(r.ExistingNodes) > 0 {
		return nil, errors.New("karpenter placed pods on existing nodes, but the problem has none")
	}
	unsched := map[int]int{}
	reason := map[int]string{}
	for pod, err := range r.PodErrors {
		g := in.groupOf[pod.UID]
		unsched[g]++
		if reason[g] == "" && err != nil {
			reason[g] = "karpenter: " + firstLine(err.Error())
		}
	}
	for _, g := range sortedKeys(unsched) {
		if reason[g] == "" {
			reason[g] = "karpenter: not scheduled"
		}
		pl.Unschedulable = append(pl.Unschedulable, unschedulable{Group: g, Count: unsched[g], Reason: reason[g]})
	}
	return pl, nil
}

func sortedKeys(m map[int]int) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (p *plan) nodes() []newNode {
	if p == nil {
		return nil
	}
	return p.NewNodes
}

func (p *plan) cost() float64 {
	if p == nil {
		return 0
	}
	return p.Cost
}

// karpenterVersion is the linked sigs.k8s.io/karpenter version, from the build info.
func karpenterVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "sigs.k8s.io/karpenter" {
				return m.Version
			}
		}
	}
	return "(unknown version)"
}
