package solver

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
	"github.com/packwright/packwright/solver/mip"
)

// maxCountProblem has a cheap offering that may be launched only limit times (0: unlimited) and a dearer
// unlimited one of the same shape; pods pods of 1 cpu need pods/4 nodes of 4 cpu.
func maxCountProblem(pods, limit int) *model.Problem {
	p := &model.Problem{Zones: []string{"a"}, Pools: []model.NodePool{{Name: "default"}}}
	shape := model.Resources{model.CPU: 4000, model.Memory: 16 << 30, model.Pods: 110}
	for i, price := range []float64{0.10, 0.30} {
		p.Offerings = append(p.Offerings, model.Offering{ID: fmt.Sprintf("o%d", i), NodePool: "default",
			InstanceType: fmt.Sprintf("t%d", i), Zone: "a", CapacityType: model.OnDemand, Price: price,
			Capacity: shape, Allocatable: shape, Labels: map[string]string{model.LabelZone: "a"}})
	}
	p.Offerings[0].MaxCount = limit
	g := model.PodGroup{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"},
		Requests: model.Resources{model.CPU: 1000, model.Memory: 1 << 30, model.Pods: 1}}
	for i := 0; i < pods; i++ {
		g.Pods = append(g.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("web-%d", i)})
	}
	p.Groups = []model.PodGroup{g}
	return p
}

// TestMaxCount checks that both solvers launch a limited offering at most MaxCount times and fill the rest
// with the dearer offering, at the optimal cost.
func TestMaxCount(t *testing.T) {
	cases := []struct {
		name        string
		pods, limit int
		want        float64 // optimal cost
	}{
		{"unlimited", 16, 0, 0.40},
		{"limit 1", 16, 1, 0.10 + 3*0.30},
		{"limit 3", 16, 3, 3*0.10 + 0.30},
		{"limit above need", 8, 5, 0.20},
	}
	kinds := solverKinds()
	for _, tc := range cases {
		for _, kind := range kinds {
			t.Run(fmt.Sprintf("%s/%s", tc.name, kind), func(t *testing.T) {
				p := maxCountProblem(tc.pods, tc.limit)
				plan, err := Solve(context.Background(), p, Options{Kind: kind, Deadline: 2 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				if err := plan.Validate(p); err != nil {
					t.Fatalf("invalid plan: %v", err)
				}
				used := 0
				for _, nn := range plan.NewNodes {
					if nn.Offering == 0 {
						used++
					}
				}
				if tc.limit > 0 && used > tc.limit {
					t.Fatalf("offering o0 launched %d times, limit %d", used, tc.limit)
				}
				if len(plan.Unschedulable) > 0 {
					t.Fatalf("unschedulable pods: %+v", plan.Unschedulable)
				}
				if math.Abs(plan.Cost-tc.want) > 1e-9 {
					t.Fatalf("cost %.4f, want %.4f (%s, %s)", plan.Cost, tc.want, plan.Status, plan.StatusReason)
				}
				if plan.LowerBound > tc.want+1e-9 {
					t.Fatalf("lower bound %.4f above the optimum %.4f", plan.LowerBound, tc.want)
				}
			})
		}
	}
}

// TestMaxCountMIPAlone runs the MIP without the greedy warm start, so that its own limit rows, priced duals
// and plan decoding must keep the limited offering within MaxCount.
func TestMaxCountMIPAlone(t *testing.T) {
	if !highs.Available() {
		t.Skip("HiGHS not available (built without cgo)")
	}
	for _, limit := range []int{1, 2, 3} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			p := maxCountProblem(16, limit)
			_, res := mipAlone(t, p)
			if err := res.Plan.Validate(p); err != nil {
				t.Fatalf("invalid plan: %v", err)
			}
			want := float64(limit)*0.10 + float64(4-limit)*0.30
			if math.Abs(res.Plan.Cost-want) > 1e-9 || len(res.Plan.Unschedulable) > 0 {
				t.Fatalf("cost %.4f (unschedulable %+v), want %.4f", res.Plan.Cost, res.Plan.Unschedulable, want)
			}
			if res.LowerBound > want+1e-9 || res.LowerBound < want-1e-6 {
				t.Fatalf("lower bound %.4f, want %.4f (the LP is integral here)", res.LowerBound, want)
			}
		})
	}
}

// TestMaxCountMembers has several one-off offerings of one shape at different prices (as consolidation's
// candidate nodes are): one class in the MIP, whose nodes must go to distinct members, cheapest first.
func TestMaxCountMembers(t *testing.T) {
	p := maxCountProblem(16, 0)
	base := p.Offerings[0]
	p.Offerings = p.Offerings[1:] // the unlimited 0.30 one
	for i, price := range []float64{0.09, 0.05, 0.08, 0.06, 0.07} {
		o := base
		o.ID, o.Price, o.MaxCount = fmt.Sprintf("node-%d", i), price, 1
		p.Offerings = append(p.Offerings, o)
	}
	const want = 0.05 + 0.06 + 0.07 + 0.08
	kinds := solverKinds()
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			plan, err := Solve(context.Background(), p, Options{Kind: kind, Deadline: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if err := plan.Validate(p); err != nil {
				t.Fatalf("invalid plan: %v", err)
			}
			if math.Abs(plan.Cost-want) > 1e-9 || len(plan.Unschedulable) > 0 {
				t.Fatalf("cost %.4f (unschedulable %+v), want %.4f", plan.Cost, plan.Unschedulable, want)
			}
		})
	}
	if !highs.Available() {
		return
	}
	c, err := prep.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mip.Solve(context.Background(), c, nil, mip.Options{})
	if err != nil || res.Plan == nil {
		t.Fatalf("mip alone: %v %+v", err, res)
	}
	if err := res.Plan.Validate(p); err != nil {
		t.Fatalf("mip alone: invalid plan: %v", err)
	}
	if res.LowerBound > want+1e-9 {
		t.Fatalf("mip alone: lower bound %.4f above the optimum %.4f", res.LowerBound, want)
	}
	if len(res.Plan.Unschedulable) > 0 || res.Plan.Cost > want+1e-9 {
		t.Fatalf("mip alone: cost %.4f (unschedulable %+v), want %.4f", res.Plan.Cost, res.Plan.Unschedulable, want)
	}
}

// mipAlone compiles p and runs the MIP on its own for 2 s, without a greedy plan to start from; it fails the test
// unless the MIP returns a plan.
func mipAlone(t *testing.T, p *model.Problem) (*prep.Problem, *mip.Result) {
	t.Helper()
	c, err := prep.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, err := mip.Solve(ctx, c, nil, mip.Options{})
	if err != nil {
		t.Fatalf("mip: %v", err)
	}
	if res.Plan == nil {
		t.Fatalf("mip: no plan (%s)", res.MasterStatus)
	}
	return c, res
}
