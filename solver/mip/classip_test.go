package mip

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/packwright/packwright/solver/internal/prep"
)

func TestClassIPBound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pods   int
		cpu    int64
		spread bool
		groups int // the pods are split into this many groups of the same requests (0 or 1: one group)
		free   int64
		want   float64
	}{
		// 3 pods of 0.3 CPU in two zones: the LPs buy 0.6 and 0.3 of a node (shape LP: 2/3 of a $1 node and
		// 1/3 of a $2 one), but each zone needs a whole node.
		{name: "whole nodes", pods: 3, cpu: 300, spread: true, want: 1 + 2},
		// 4 pods of 0.5 CPU fill a node per zone exactly.
		{name: "exact fill", pods: 4, cpu: 500, spread: true, want: 1 + 2},
		// Three groups of one 0.6 CPU pod: 1.8 CPU is two nodes' room, but no two of them share a node.
		{name: "whole pods across groups", pods: 3, cpu: 600, groups: 3, want: 3},
		// No zone rule: the cheap zone takes all 5 pods of 0.3 CPU and 1 GiB, two to a node.
		{name: "no zone rule", pods: 5, cpu: 300, want: 3},
		// A running node in z2 with 1 CPU free holds one of z2's two 0.6 CPU pods; the other needs a $2 node,
		// and z1's two a $1 node each (the fluid LP: $1.6/h).
		{name: "running node", pods: 4, cpu: 600, spread: true, free: 1000, want: 2*1 + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := twoZoneProblem(tc.pods, tc.cpu, tc.spread, tc.free)
			if tc.groups > 1 {
				g := p.Groups[0]
				p.Groups = nil
				for j := range tc.groups {
					part := g
					part.Name = fmt.Sprintf("web-%d", j)
					part.Pods = nil
					for i := j; i < len(g.Pods); i += tc.groups {
						part.Pods = append(part.Pods, g.Pods[i])
					}
					p.Groups = append(p.Groups, part)
				}
			}
			c, err := prep.Compile(p)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			m := builtMaster(t, ctx, c)
			lp := m.classIPModel(false)
			if lp == nil {
				t.Fatal("the class program does not apply")
			}
			got, err := solveClassIP(ctx, lp, time.Now().Add(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tc.want) > 1e-5*tc.want {
				t.Fatalf("class IP bound %v, want %v", got, tc.want)
			}
		})
	}
}
