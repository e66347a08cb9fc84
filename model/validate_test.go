package model

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// planCase is one table entry: a problem, a plan over it, and the expected verdict.
type planCase struct {
	name string
	p    *Problem
	plan *Plan
	want string // "" for a valid plan, else a substring of the error
}

func runPlanCases(t *testing.T, cases []planCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkPlan(t, tc.p, tc.plan, tc.want) })
	}
}

func TestValidateAccounting(t *testing.T) {
	p := baseProblem(group("web", 4, 500, nil), group("db", 1, 500, nil))
	withUnsched := func(pl *Plan, u ...Unschedulable) *Plan { pl.Unschedulable = u; return pl }
	withExisting := func(pl *Plan, e ...ExistingPlacement) *Plan { pl.Existing = e; return pl }
	pe := baseProblem(group("web", 4, 500, nil))
	pe.Nodes = []ExistingNode{existing("n1", "a")}
	runPlanCases(t, []planCase{
		{"exact", p, plan(p, nn(0, gc(0, 3), gc(1, 1)), nn(1, gc(0, 1))), ""},
		{"lost pod", p, plan(p, nn(0, gc(0, 3), gc(1, 1))), `group "ns/web": 1 of 4 pods lost`},
		{"group never placed", p, plan(p, nn(0, gc(0, 4))), `group "ns/db": 1 of 1 pods lost`},
		{"double placed", p, plan(p, nn(0, gc(0, 3), gc(1, 1)), nn(1, gc(0, 2))), `group "ns/web": 5 pods accounted for but demand is 4`},
		{"placed and unschedulable", p, withUnsched(plan(p, nn(0, gc(0, 4), gc(1, 1))), Unschedulable{0, 1, "too big"}), "placed more than once"},
		{"unschedulable with reason", p, withUnsched(plan(p, nn(0, gc(0, 4))), Unschedulable{1, 1, "no offering fits"}), ""},
		{"unschedulable without reason", p, withUnsched(plan(p, nn(0, gc(0, 4))), Unschedulable{1, 1, "  "}), "without a reason"},
		{"zero count", p, plan(p, nn(0, gc(0, 4), gc(1, 1), gc(0, 0))), "count 0 is not positive"},
		{"negative count", p, plan(p, nn(0, gc(0, 5), gc(1, 1), gc(0, -1))), "count -1 is not positive"},
		{"group index out of range", p, plan(p, nn(0, gc(0, 4), gc(1, 1), gc(7, 1))), "group index 7 out of range"},
		{"offering index out of range", p, &Plan{NewNodes: []NewNode{nn(9, gc(0, 4), gc(1, 1))}}, "offering index 9 out of range"},
		{"negative unschedulable", p, withUnsched(plan(p, nn(0, gc(0, 4), gc(1, 1))), Unschedulable{1, -1, "x"}), "count -1 is not positive"},
		{"existing placement", pe, withExisting(plan(pe), ExistingPlacement{0, []GroupCount{gc(0, 4)}}), ""},
		{"existing placements merged", pe, withExisting(plan(pe), ExistingPlacement{0, []GroupCount{gc(0, 2)}}, ExistingPlacement{0, []GroupCount{gc(0, 2)}}), ""},
		{"existing node index out of range", pe, withExisting(plan(pe), ExistingPlacement{3, []GroupCount{gc(0, 4)}}), "node index 3 out of range"},
	})
}

func TestValidateCapacity(t *testing.T) {
	p := baseProblem(group("web", 5, 500, nil))
	gpuGroup := group("ml", 1, 100, nil)
	gpuGroup.Requests[GPU] = 1
	pg := baseProblem(gpuGroup)
	noPods := group("np", 11, 1, nil)
	delete(noPods.Requests, Pods)
	delete(noPods.Requests, Memory)
	pn := baseProblem(noPods)
	pe := baseProblem(group("web", 3, 1000, nil))
	pe.Nodes = []ExistingNode{existing("n1", "a", bound("old-0", nil, 1500), bound("old-1", nil, 500))} // 2 of 4 cpu free
	existingPlan := func(pr *Problem, n int) *Plan {
		pl := plan(pr)
		pl.Existing = []ExistingPlacement{{0, []GroupCount{gc(0, n)}}}
		if n < pr.Groups[0].Demand() {
			pl.NewNodes = []NewNode{nn(0, gc(0, pr.Groups[0].Demand()-n))}
			pl.Cost = priceOf(pr, pl)
		}
		return pl
	}
	runPlanCases(t, []planCase{
		{"cpu fits exactly", p, plan(p, nn(0, gc(0, 4)), nn(1, gc(0, 1))), ""},
		{"cpu exceeded", p, plan(p, nn(0, gc(0, 5))), `new node 0 (offering "small-a"): placed pods exceed capacity: cpu 2500m > 2 free`},
		{"duplicate entries summed", p, plan(p, nn(0, gc(0, 3), gc(0, 2))), "cpu 2500m > 2 free"},
		{"extended resource absent on offering", pg, plan(pg, nn(0, gc(0, 1))), "nvidia.com/gpu 1 > 0 free"},
		{"pods slot counted without a pods request", pn, plan(pn, nn(0, gc(0, 11))), "pods 11 > 10 free"},
		{"pods slot fits", pn, plan(pn, nn(0, gc(0, 10)), nn(1, gc(0, 1))), ""},
		{"existing residual fits", pe, existingPlan(pe, 2), ""},
		{"existing residual exceeded", pe, existingPlan(pe, 3), `node "n1": placed pods exceed capacity: cpu 3 > 2 free (allocatable 4, bound pods 2)`},
	})
}

func TestValidateCompatibility(t *testing.T) {
	arm := group("arm", 1, 100, nil)
	arm.NodeSelector = lbl(LabelArch, "arm64")
	pArm := baseProblem(arm)

	tainted := baseProblem(group("web", 1, 100, nil))
	tainted.Offerings[0].Taints = []Taint{{Key: "gpu", Value: "true", Effect: NoSchedule}}
	tolerant := group("web", 1, 100, nil)
	tolerant.Tolerations = []Toleration{{Key: "gpu", Operator: TolerationEqual, Value: "true", Effect: NoSchedule}}
	tolerated := baseProblem(tolerant)
	tolerated.Offerings = tainted.Offerings

	notA := group("nota", 1, 100, nil)
	notA.NodeAffinity = NodeSelectorTerms{{req(LabelZone, OpNotIn, "a")}}
	pNotA := baseProblem(notA)

	pinned := group("pinned", 1, 100, nil)
	pinned.NodeSelector = lbl(LabelHostname, "n1")
	pPinned := baseProblem(pinned)
	pPinned.Nodes = []ExistingNode{existing("n1", "a")}
	pinnedOnExisting := plan(pPinned)
	pinnedOnExisting.Existing = []ExistingPlacement{{0, []GroupCount{gc(0, 1)}}}

	noHost := group("nohost", 1, 100, nil)
	noHost.NodeAffinity = NodeSelectorTerms{{req(LabelHostname, OpNotIn, "n1")}}
	pNoHost := baseProblem(noHost)
	pNoHost.Nodes = []ExistingNode{existing("n1", "a")}
	noHostOnExisting := plan(pNoHost)
	noHostOnExisting.Existing = []ExistingPlacement{{0, []GroupCount{gc(0, 1)}}}

	anyHost := group("anyhost", 1, 100, nil)
	anyHost.NodeAffinity = NodeSelectorTerms{{req(LabelHostname, OpExists)}}
	pAnyHost := baseProblem(anyHost)

	runPlanCases(t, []planCase{
		{"nodeSelector mismatch", pArm, plan(pArm, nn(0, gc(0, 1))), `group "ns/arm" (1 pods) incompatible: nodeSelector kubernetes.io/arch=arm64 not matched`},
		{"untolerated taint", tainted, plan(tainted, nn(0, gc(0, 1))), "untolerated taint gpu=true:NoSchedule"},
		{"tolerated taint", tolerated, plan(tolerated, nn(0, gc(0, 1))), ""},
		{"affinity NotIn zone", pNotA, plan(pNotA, nn(0, gc(0, 1))), "required node affinity not matched"},
		{"affinity NotIn other zone", pNotA, plan(pNotA, nn(1, gc(0, 1))), ""},
		{"hostname selector on a new node", pPinned, plan(pPinned, nn(0, gc(0, 1))), "nodeSelector kubernetes.io/hostname=n1 not matched"},
		{"hostname selector on its node", pPinned, pinnedOnExisting, ""},
		{"hostname NotIn on a new node", pNoHost, plan(pNoHost, nn(0, gc(0, 1))), ""},
		{"hostname NotIn on that node", pNoHost, noHostOnExisting, "required node affinity not matched"},
		{"a new node has a hostname", pAnyHost, plan(pAnyHost, nn(0, gc(0, 1))), ""},
	})
}

func TestValidateHostPorts(t *testing.T) {
	web := group("web", 2, 100, nil)
	web.HostPorts = []int32{8080}
	other := group("other", 1, 100, nil)
	other.HostPorts = []int32{9090, 8080}
	p := baseProblem(web, other)
	pb := baseProblem(group("web", 1, 100, nil))
	pb.Groups[0].HostPorts = []int32{8080}
	bp := bound("proxy", nil, 100)
	bp.HostPorts = []int32{8080}
	pb.Nodes = []ExistingNode{existing("n1", "a", bp)}
	onBound := plan(pb)
	onBound.Existing = []ExistingPlacement{{0, []GroupCount{gc(0, 1)}}}
	runPlanCases(t, []planCase{
		{"separate nodes", p, plan(p, nn(0, gc(0, 1)), nn(1, gc(0, 1)), nn(2, gc(1, 1))), ""},
		{"same group twice on a node", p, plan(p, nn(0, gc(0, 2)), nn(1, gc(1, 1))), "2 pods of group \"ns/web\" all use host port 8080"},
		{"two groups one port", p, plan(p, nn(0, gc(0, 1), gc(1, 1)), nn(1, gc(0, 1))), `group "ns/other" and group "ns/web" both use host port 8080`},
		{"bound pod holds the port", pb, onBound, `group "ns/web" and bound pod ns/proxy both use host port 8080`},
	})
}

func TestValidateLimits(t *testing.T) {
	p := baseProblem(group("web", 8, 1000, nil))
	p.Pools[0].Limits = Resources{CPU: 4000}
	pe := baseProblem(group("web", 2, 1000, nil))
	pe.Pools[0].Limits = Resources{CPU: 6000}
	pe.Nodes = []ExistingNode{existing("n1", "a")} // 4 cpu capacity already in the pool
	pw := baseProblem(group("web", 4, 1000, nil))
	pw.Pools[0].Limits = Resources{CPU: 4000}
	runPlanCases(t, []planCase{
		{"within", pw, plan(pw, nn(0, gc(0, 2)), nn(1, gc(0, 2))), ""},
		{"exceeded", p, plan(p, nn(0, gc(0, 2)), nn(1, gc(0, 2)), nn(0, gc(0, 2)), nn(1, gc(0, 2))),
			`pool "default": cpu 8 exceeds limit 4 (existing nodes 0, 4 new nodes 8)`},
		{"existing nodes count", pe, plan(pe, nn(0, gc(0, 1)), nn(1, gc(0, 1))), `pool "default": cpu 8 exceeds limit 6 (existing nodes 4, 2 new nodes 4)`},
		{"existing plus one fits", pe, plan(pe, nn(0, gc(0, 2))), ""},
	})
}

func TestValidateMaxCount(t *testing.T) {
	p := baseProblem(group("web", 4, 1000, nil))
	p.Offerings[0].MaxCount = 1
	p.Offerings[1].MaxCount = 2
	runPlanCases(t, []planCase{
		{"once", p, plan(p, nn(0, gc(0, 2)), nn(1, gc(0, 2))), ""},
		{"at the limit", p, plan(p, nn(1, gc(0, 2)), nn(1, gc(0, 2))), ""},
		{"unlimited offering", p, plan(p, nn(2, gc(0, 1)), nn(2, gc(0, 3))), ""},
		{"twice", p, plan(p, nn(0, gc(0, 2)), nn(0, gc(0, 2))), `offering "small-a": 2 new nodes exceed its max count 1`},
	})
	bad := baseProblem(group("web", 1, 100, nil))
	bad.Offerings[0].MaxCount = -1
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "max count -1 is negative") {
		t.Fatalf("Problem.Validate with MaxCount -1: got %v", err)
	}
}

func TestValidateCost(t *testing.T) {
	p := baseProblem(group("web", 1, 100, nil))
	withCost := func(cost, lb float64) *Plan {
		pl := plan(p, nn(2, gc(0, 1)))
		pl.Cost, pl.LowerBound = cost, lb
		return pl
	}
	runPlanCases(t, []planCase{
		{"exact", p, withCost(0.8, 0.8), ""},
		{"within tolerance", p, withCost(0.8*(1+5e-7), 0.1), ""},
		{"wrong cost", p, withCost(0.7, 0), "cost 0.7 differs from the sum of the new nodes' prices 0.8"},
		{"NaN cost", p, withCost(math.NaN(), 0), "cost NaN differs"},
		{"bound above cost", p, withCost(0.8, 0.9), "lower bound 0.9 exceeds cost 0.8"},
		{"bound within tolerance", p, withCost(0.8, 0.8+5e-7), ""},
		{"NaN bound", p, withCost(0.8, math.NaN()), "lower bound NaN"},
	})
}

func TestValidateListsEveryViolation(t *testing.T) {
	p := baseProblem(group("web", 6, 1000, nil), group("db", 2, 100, nil))
	pl := plan(p, nn(0, gc(0, 6)))
	pl.Cost = 5
	err := pl.Validate(p)
	if err == nil {
		t.Fatal("Validate accepted a broken plan")
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 3 {
		t.Fatalf("want 3 joined violations (capacity, lost db pods, cost), got: %v", err)
	}
	for _, want := range []string{"exceed capacity", `"ns/db": 2 of 2 pods lost`, "cost 5"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestValidateNil(t *testing.T) {
	var pl *Plan
	if pl.Validate(&Problem{}) == nil {
		t.Error("nil plan validated")
	}
	if (&Plan{}).Validate(&Problem{}) != nil {
		t.Error("empty plan of an empty problem should validate")
	}
}
