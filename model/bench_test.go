package model

import (
	"fmt"
	"strings"
	"testing"
)

// largeCase builds a valid plan of 50,000 pods in 300 groups over 2,000 new nodes in three zones, with a
// mix of constraints: hostname anti-affinity, zone and hostname spread, node selectors, tolerations, zone
// pod affinity and never-matching zone anti-affinity. Pod k goes to node k mod 2000, so each group has at
// most one pod per node and its pods cycle through the zones: every constraint holds. (Zone spread goes to
// groups that do not wrap around from node 1999 to node 0, where the zone cycle breaks as 2000 % 3 != 0.)
func largeCase() (*Problem, *Plan) {
	const nodes = 2000
	zones := []string{"a", "b", "c"}
	p := &Problem{Pools: []NodePool{{Name: testPool, Limits: Resources{CPU: 100000 * 1000}}}, Zones: zones}
	big := make(map[string]int)
	for _, z := range zones {
		for size := int64(1); size <= 32; size *= 2 { // 6 sizes per zone; only the largest is used
			id := fmt.Sprintf("m.%dx-%s", size, z)
			if size == 32 {
				big[z] = len(p.Offerings)
			}
			p.Offerings = append(p.Offerings, offering(id, z, size, 4*size, 110, 0.05*float64(size)))
		}
	}
	start := 0
	for g := range 300 {
		n := 150
		if g >= 200 {
			n = 200
		}
		wraps := start/nodes != (start+n-1)/nodes
		start += n
		app := fmt.Sprintf("app-%d", g)
		grp := group(app, n, 500, map[string]string{"app": app, "tier": fmt.Sprint("t", g%5)})
		if g%3 == 0 {
			grp.PodAntiAffinity = append(grp.PodAntiAffinity, antiTerm(LabelHostname, "app", app))
		}
		if g%3 == 1 && !wraps {
			grp.TopologySpread = append(grp.TopologySpread, TopologySpread{MaxSkew: 1, TopologyKey: LabelZone,
				WhenUnsatisfiable: DoNotSchedule, Selector: sel("app", app), MinDomains: 3})
		}
		if g%5 == 2 {
			grp.TopologySpread = append(grp.TopologySpread, TopologySpread{MaxSkew: 1, TopologyKey: LabelHostname,
				WhenUnsatisfiable: DoNotSchedule, Selector: sel("app", app)})
		}
		if g%4 == 0 {
			grp.NodeSelector = lbl(LabelArch, "amd64")
		}
		if g%7 == 0 {
			grp.Tolerations = []Toleration{{Key: "dedicated", Operator: TolerationExists}}
		}
		if g%10 == 5 {
			grp.PodAffinity = []PodAffinityTerm{antiTerm(LabelZone, "app", fmt.Sprintf("app-%d", g-1))}
		}
		if g%6 == 1 {
			grp.PodAntiAffinity = append(grp.PodAntiAffinity, antiTerm(LabelZone, "app", "nothing"))
		}
		p.Groups = append(p.Groups, grp)
	}
	pl := &Plan{NewNodes: make([]NewNode, nodes)}
	for i := range pl.NewNodes {
		pl.NewNodes[i].Offering = big[zones[i%len(zones)]]
	}
	k := 0
	for g := range p.Groups {
		for range p.Groups[g].Pods {
			node := &pl.NewNodes[k%nodes]
			node.Pods = append(node.Pods, GroupCount{Group: g, Count: 1})
			k++
		}
	}
	pl.Cost = priceOf(p, pl)
	pl.LowerBound = pl.Cost * 0.99
	return p, pl
}

func TestLargeCase(t *testing.T) {
	p, pl := largeCase()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := pl.Validate(p); err != nil {
		t.Fatalf("the benchmark plan should be valid: %v", err)
	}
	// Move one pod of group 0 (hostname anti-affinity) onto a node holding another of its pods.
	pl.NewNodes[0].Pods[0].Count++
	pl.NewNodes[1999].Pods = pl.NewNodes[1999].Pods[:len(pl.NewNodes[1999].Pods)-1] // drop a pod of group 299
	pl.Unschedulable = []Unschedulable{{Group: 299, Count: 1, Reason: "test"}}
	pl.NewNodes[1].Pods = pl.NewNodes[1].Pods[1:] // group 0's pod on node 1 moved to node 0
	err := pl.Validate(p)
	if err == nil || !strings.Contains(err.Error(), `"ns/app-0": required anti-affinity`) {
		t.Fatalf("want the anti-affinity violation, got %v", err)
	}
}

func BenchmarkValidate(b *testing.B) {
	p, pl := largeCase()
	b.ReportAllocs()
	for b.Loop() {
		if err := pl.Validate(p); err != nil {
			b.Fatal(err)
		}
	}
}
