package mip

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/internal/prep"
)

// twoZoneProblem: one offering per zone of 1 CPU, $1/h in z1 and $2/h in z2, and pods of cpu milli-CPU,
// spread over both zones with maxSkew 1 when spread; free is the CPU (milli) free on a running node in z2.
func twoZoneProblem(pods int, cpu int64, spread bool, free int64) *model.Problem {
	zones := []string{"z1", "z2"}
	p := &model.Problem{Zones: zones, Pools: []model.NodePool{{Name: "default"}}}
	one := model.Resources{model.CPU: 1000, model.Memory: 2 << 30, model.Pods: 110}
	for i, z := range zones {
		p.Offerings = append(p.Offerings, model.Offering{ID: "one/" + z, NodePool: "default", InstanceType: "one", Zone: z,
			CapacityType: model.OnDemand, Price: float64(i + 1), Capacity: one, Allocatable: one,
			Labels: map[string]string{model.LabelZone: z, model.LabelInstanceType: "one"}})
	}
	if free > 0 {
		alloc := model.Resources{model.CPU: free, model.Memory: 8 << 30, model.Pods: 110}
		p.Nodes = append(p.Nodes, model.ExistingNode{Name: "run", NodePool: "default", InstanceType: "run", Zone: "z2",
			CapacityType: model.OnDemand, Price: 3, Capacity: alloc, Allocatable: alloc,
			Labels: map[string]string{model.LabelZone: "z2", model.LabelInstanceType: "run", model.LabelHostname: "run"}})
	}
	g := model.PodGroup{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"},
		Requests: model.Resources{model.CPU: cpu, model.Memory: 1 << 30, model.Pods: 1}}
	if spread {
		g.TopologySpread = []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone, WhenUnsatisfiable: model.DoNotSchedule,
			Selector: &model.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	}
	for i := range pods {
		g.Pods = append(g.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("web-%d", i)})
	}
	p.Groups = []model.PodGroup{g}
	return p
}

func TestZoneFluidBound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pods   int
		spread bool
		free   int64
		want   float64
	}{
		// Half the pods must go to the $2/h zone: 2 x $1 + 2 x $2.
		{name: "spread into a dear zone", pods: 4, spread: true, want: 6},
		// 5 pods: 2 or 3 per zone; the cheap zone takes 3.
		{name: "odd count", pods: 5, spread: true, want: 3 + 2*2},
		// The running node takes one of z2's pods for nothing.
		{name: "running node's room", pods: 4, spread: true, free: 1000, want: 2 + 2},
		// No zone rule: zones do not matter and the LP says nothing (the greedy's bound covers it).
		{name: "no zone rule", pods: 4, spread: false, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := prep.Compile(twoZoneProblem(tc.pods, 1000, tc.spread, tc.free))
			if err != nil {
				t.Fatal(err)
			}
			m := builtMaster(t, context.Background(), c)
			got, err := m.zoneFluidBound(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tc.want) > 1e-5*math.Max(1, tc.want) {
				t.Fatalf("bound %v, want %v", got, tc.want)
			}
		})
	}
}

// The zone fluid program's nodes in whole numbers: a zone spread fixes each zone's share, and a hostname
// anti-affinity needs a node per pod of a zone however small the pods.
func TestZoneFluidNodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		pods int
		cpu  int64
		anti bool
		want [2]int // nodes in z1 ($1/h) and z2 ($2/h)
	}{
		// Four 1-CPU pods, two per zone.
		{name: "whole nodes per zone", pods: 4, cpu: 1000, want: [2]int{2, 2}},
		// Five 0.3-CPU pods of 1 GiB (nodes have 2 GiB): z1 takes three, 1.5 nodes as a fluid, so two whole
		// nodes; z2's two fill one.
		{name: "rounded up per zone", pods: 5, cpu: 300, want: [2]int{2, 1}},
		// The same pods, one per node: three nodes in z1, two in z2.
		{name: "anti-affinity", pods: 5, cpu: 300, anti: true, want: [2]int{3, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := twoZoneProblem(tc.pods, tc.cpu, true, 0)
			if tc.anti {
				p.Groups[0].PodAntiAffinity = []model.PodAffinityTerm{{TopologyKey: model.LabelHostname,
					Selector: &model.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
			}
			c, err := prep.Compile(p)
			if err != nil {
				t.Fatal(err)
			}
			m := builtMaster(t, context.Background(), c)
			nodes, err := m.zoneFluidNodes(context.Background(), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var got [2]int
			for _, o := range nodes {
				got[o]++ // offering i is zone i's
			}
			if got != tc.want {
				t.Fatalf("nodes per zone %v, want %v", got, tc.want)
			}
		})
	}
	// Without zone rules it does not apply.
	c, err := prep.Compile(twoZoneProblem(4, 1000, false, 0))
	if err != nil {
		t.Fatal(err)
	}
	if nodes, err := builtMaster(t, context.Background(), c).zoneFluidNodes(context.Background(), time.Second); nodes != nil || err != nil {
		t.Fatalf("no zone rule: nodes %v, err %v", nodes, err)
	}
}
