package model

import "testing"

// weightedProblem has pool "low" (weight 0) with offerings 0:"low-a" (zone a) and 1:"low-b" (zone b) at $0.1,
// and pool "high" (weight 10) with 2:"high-a" (zone a) at $0.3; all 2 cpu, 8Gi, 10 pods.
func weightedProblem(groups ...PodGroup) *Problem {
	p := baseProblem(groups...)
	high := offering("high-a", "a", 2, 8, 10, 0.3)
	high.NodePool, high.Labels[LabelNodePool] = "high", "high"
	p.Offerings = []Offering{p.Offerings[0], p.Offerings[1], high}
	p.Offerings[0].ID, p.Offerings[1].ID = "low-a", "low-b"
	for i := range 2 {
		p.Offerings[i].NodePool, p.Offerings[i].Labels[LabelNodePool] = "low", "low"
	}
	p.Pools = []NodePool{{Name: "low"}, {Name: "high", Weight: 10}}
	return p
}

func TestValidateWeights(t *testing.T) {
	web := group("web", 4, 500, lbl("app", "web")) // 4 pods fit one node
	p := weightedProblem(web)

	limited := weightedProblem(group("web", 8, 500, lbl("app", "web")))
	limited.Pools[1].Limits = Resources{CPU: 2000} // one high node
	limitedTwo := weightedProblem(group("web", 8, 500, lbl("app", "web")))
	limitedTwo.Pools[1].Limits = Resources{CPU: 4000}

	tainted := weightedProblem(web)
	tainted.Offerings[2].Taints = []Taint{{Key: "dedicated", Value: "x", Effect: NoSchedule}}

	equal := weightedProblem(web)
	equal.Pools[1].Weight = 0

	affine := group("web", 4, 500, lbl("app", "web"))
	affine.PodAffinity = []PodAffinityTerm{{Selector: sel("app", "web"), TopologyKey: LabelZone}}
	pAffine := weightedProblem(affine)

	// A DoNotSchedule hostname spread of another group that finds high-a eligible: a fresh high node
	// would be an empty domain of it, so high-a is no room.
	spread := group("db", 2, 500, lbl("app", "db"))
	spread.TopologySpread = []TopologySpread{{MaxSkew: 1, TopologyKey: LabelHostname, WhenUnsatisfiable: DoNotSchedule,
		Selector: sel("app", "db")}}
	pSpread := weightedProblem(web, spread)

	runPlanCases(t, []planCase{
		{"on the higher weight", p, plan(p, nn(2, gc(0, 4))), ""},
		{"on the lower weight while the higher has room", p, plan(p, nn(0, gc(0, 4))),
			`group "ns/web" is on pool "low" (weight 0) but pool "high" (weight 10) could take it`},
		{"other zone: no higher-weight offering there", p, plan(p, nn(1, gc(0, 4))), ""},
		{"overflow once the limit is used up", limited, plan(limited, nn(2, gc(0, 4)), nn(0, gc(0, 4))), ""},
		{"overflow before the limit is used up", limitedTwo, plan(limitedTwo, nn(2, gc(0, 4)), nn(0, gc(0, 4))),
			`pool "high" (weight 10) could take it`},
		{"incompatible with the higher weight", tainted, plan(tainted, nn(0, gc(0, 4))), ""},
		{"equal weights: price decides", equal, plan(equal, nn(0, gc(0, 4))), ""},
		{"required pod affinity is not checked", pAffine, plan(pAffine, nn(0, gc(0, 4))), ""},
		{"an offering that opens a hostname-spread domain is no room", pSpread,
			plan(pSpread, nn(0, gc(0, 4)), nn(2, gc(1, 1)), nn(2, gc(1, 1))), ""},
	})
}

func TestOfferingWeights(t *testing.T) {
	p := weightedProblem(group("web", 1, 100, nil))
	w, differ := p.OfferingWeights()
	if !differ || w[0] != 0 || w[1] != 0 || w[2] != 10 {
		t.Fatalf("weights %v differ %v, want [0 0 10] true", w, differ)
	}
	if got := p.PoolWeight("high"); got != 10 {
		t.Fatalf("PoolWeight(high) = %d, want 10", got)
	}
	if got := p.PoolWeight("missing"); got != 0 {
		t.Fatalf("PoolWeight(missing) = %d, want 0", got)
	}
	p.Pools[1].Weight = 0
	if _, differ := p.OfferingWeights(); differ {
		t.Fatal("equal weights reported as differing")
	}
}
