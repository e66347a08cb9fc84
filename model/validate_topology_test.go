package model

import "testing"

func antiTerm(key string, kv ...string) PodAffinityTerm {
	return PodAffinityTerm{Selector: sel(kv...), TopologyKey: key}
}

func withExisting(pl *Plan, node int, pods ...GroupCount) *Plan {
	pl.Existing = append(pl.Existing, ExistingPlacement{Node: node, Pods: pods})
	return pl
}

func TestValidateAntiAffinity(t *testing.T) {
	// Two pods that may not share a host.
	web := group("web", 2, 100, lbl("app", "web"))
	web.PodAntiAffinity = []PodAffinityTerm{antiTerm(LabelHostname, "app", "web")}
	pHost := baseProblem(web)

	// web may not share a zone with db.
	zoneWeb := group("web", 1, 100, lbl("app", "web"))
	zoneWeb.PodAntiAffinity = []PodAffinityTerm{antiTerm(LabelZone, "app", "db")}
	pZone := baseProblem(zoneWeb, group("db", 1, 100, lbl("app", "db")))

	// db lives in another namespace: the term (own namespace) does not see it, unless it lists it.
	dbOther := group("db", 1, 100, lbl("app", "db"))
	dbOther.Namespace = "other"
	for i := range dbOther.Pods {
		dbOther.Pods[i].Namespace = "other"
	}
	pNS := baseProblem(zoneWeb, dbOther)
	nsWeb := zoneWeb
	nsWeb.PodAntiAffinity = []PodAffinityTerm{{Selector: sel("app", "db"), Namespaces: []string{"other"}, TopologyKey: LabelZone}}
	pNSListed := baseProblem(nsWeb, dbOther)

	// A bound db pod in zone a.
	pBound := baseProblem(zoneWeb)
	pBound.Nodes = []ExistingNode{existing("n1", "a", bound("db-0", lbl("app", "db"), 100))}

	// A bound pod whose own anti-affinity forbids web on its host, or in its zone.
	guard := bound("guard", lbl("app", "guard"), 100)
	guard.PodAntiAffinity = []PodAffinityTerm{antiTerm(LabelHostname, "app", "web")}
	pSym := baseProblem(group("web", 1, 100, lbl("app", "web")))
	pSym.Nodes = []ExistingNode{existing("n1", "a", guard)}
	zoneGuard := guard
	zoneGuard.PodAntiAffinity = []PodAffinityTerm{antiTerm(LabelZone, "app", "web")}
	pSymZone := baseProblem(group("web", 1, 100, lbl("app", "web")))
	pSymZone.Nodes = []ExistingNode{existing("n1", "a", zoneGuard)}

	// A custom topology key that offerings carry.
	rack := group("web", 2, 100, lbl("app", "web"))
	rack.PodAntiAffinity = []PodAffinityTerm{antiTerm("example.com/rack", "app", "web")}
	pRack := baseProblem(rack)
	pRack.Offerings[0].Labels["example.com/rack"] = "r1"
	pRack.Offerings[1].Labels["example.com/rack"] = "r1"
	pRack.Offerings[2].Labels["example.com/rack"] = "r2"
	pNoRack := baseProblem(rack) // no node has the key: the term never applies

	runPlanCases(t, []planCase{
		{"hostname: two on one host", pHost, plan(pHost, nn(2, gc(0, 2))), `group "ns/web": required anti-affinity {app=web} on kubernetes.io/hostname violated in new node 0 (offering "big-a"): 2 of its pods share it with each other`},
		{"hostname: one per host", pHost, plan(pHost, nn(0, gc(0, 1)), nn(0, gc(0, 1))), ""},
		{"zone: db in the same zone", pZone, plan(pZone, nn(0, gc(0, 1)), nn(2, gc(1, 1))), `violated in topology.kubernetes.io/zone=a: 1 of its pods share it with group "ns/db" (1 pods)`},
		{"zone: db in another zone", pZone, plan(pZone, nn(0, gc(0, 1)), nn(1, gc(1, 1))), ""},
		{"namespace: other namespace unseen", pNS, plan(pNS, nn(0, gc(0, 1), gc(1, 1))), ""},
		{"namespace: listed namespace seen", pNSListed, plan(pNSListed, nn(0, gc(0, 1), gc(1, 1))), `share it with group "ns/db"`},
		{"bound pod in the zone", pBound, plan(pBound, nn(0, gc(0, 1))), "share it with 1 bound pods (ns/db-0...)"},
		{"bound pod in another zone", pBound, plan(pBound, nn(1, gc(0, 1))), ""},
		{"symmetric: bound term forbids its host", pSym, withExisting(plan(pSym), 0, gc(0, 1)), `group "ns/web": 1 pods in node "n1" violate required anti-affinity {app=web} on kubernetes.io/hostname of bound pod ns/guard`},
		{"symmetric: other host fine", pSym, plan(pSym, nn(0, gc(0, 1))), ""},
		{"symmetric: bound zone term", pSymZone, plan(pSymZone, nn(2, gc(0, 1))), "of bound pod ns/guard"},
		{"symmetric: bound zone term, other zone", pSymZone, plan(pSymZone, nn(1, gc(0, 1))), ""},
		{"custom key shared", pRack, plan(pRack, nn(0, gc(0, 1)), nn(1, gc(0, 1))), "example.com/rack=r1"},
		{"custom key distinct", pRack, plan(pRack, nn(0, gc(0, 1)), nn(2, gc(0, 1))), ""},
		{"key absent everywhere", pNoRack, plan(pNoRack, nn(0, gc(0, 2))), ""},
	})
}

func TestValidateAffinity(t *testing.T) {
	// web must run on the host of a db pod.
	hostWeb := group("web", 1, 100, lbl("app", "web"))
	hostWeb.PodAffinity = []PodAffinityTerm{antiTerm(LabelHostname, "app", "db")}
	pBoundHost := baseProblem(hostWeb)
	pBoundHost.Nodes = []ExistingNode{existing("n1", "a", bound("db-0", lbl("app", "db"), 100)), existing("n2", "a")}

	// web must run in the zone of a db pod; db is placed by the plan too.
	zoneWeb := group("web", 2, 100, lbl("app", "web"))
	zoneWeb.PodAffinity = []PodAffinityTerm{antiTerm(LabelZone, "app", "db")}
	pZone := baseProblem(zoneWeb, group("db", 1, 100, lbl("app", "db")))

	// A self-affine group: all its pods in the zone of one of them.
	selfWeb := group("web", 3, 100, lbl("app", "web"))
	selfWeb.PodAffinity = []PodAffinityTerm{antiTerm(LabelZone, "app", "web")}
	pSelf := baseProblem(selfWeb)
	oneSelf := selfWeb
	oneSelf.Pods = oneSelf.Pods[:1]
	pSelfOne := baseProblem(oneSelf)
	pSelfBound := baseProblem(selfWeb)
	pSelfBound.Nodes = []ExistingNode{existing("n1", "b", bound("web-old", lbl("app", "web"), 100))}

	// Two terms: kube-scheduler wants one pod matching both.
	twoTerms := group("web", 1, 100, lbl("app", "web"))
	twoTerms.PodAffinity = []PodAffinityTerm{antiTerm(LabelZone, "app", "db"), antiTerm(LabelZone, "tier", "cache")}
	pTwo := baseProblem(twoTerms, group("db", 1, 100, lbl("app", "db")), group("cache", 1, 100, lbl("tier", "cache")))
	pTwoOne := baseProblem(twoTerms, group("dbcache", 1, 100, lbl("app", "db", "tier", "cache")))

	// An existing node without a zone label.
	pNoZone := baseProblem(zoneWeb, group("db", 1, 100, lbl("app", "db")))
	bare := existing("bare", "")
	delete(bare.Labels, LabelZone)
	pNoZone.Nodes = []ExistingNode{bare}

	// Two self-affine groups that match each other.
	x1 := group("x1", 1, 100, lbl("app", "x"))
	x1.PodAffinity = []PodAffinityTerm{antiTerm(LabelZone, "app", "x")}
	x2 := group("x2", 1, 200, lbl("app", "x"))
	x2.PodAffinity = x1.PodAffinity
	pSeeds := baseProblem(x1, x2)

	runPlanCases(t, []planCase{
		{"host of the bound db", pBoundHost, withExisting(plan(pBoundHost), 0, gc(0, 1)), ""},
		{"host without db", pBoundHost, withExisting(plan(pBoundHost), 1, gc(0, 1)), `group "ns/web": required pod affinity unmet: no other pod matching all its affinity terms in node "n2"`},
		{"new host without db", pBoundHost, plan(pBoundHost, nn(0, gc(0, 1))), "required pod affinity unmet"},
		{"zone of a placed db", pZone, plan(pZone, nn(0, gc(0, 1)), nn(2, gc(0, 1), gc(1, 1))), ""},
		{"zone without db", pZone, plan(pZone, nn(1, gc(0, 1)), nn(2, gc(0, 1), gc(1, 1))), "in topology.kubernetes.io/zone=b for {app=db}"},
		{"self-affine in one zone", pSelf, plan(pSelf, nn(0, gc(0, 2)), nn(2, gc(0, 1))), ""},
		{"self-affine split", pSelf, plan(pSelf, nn(0, gc(0, 2)), nn(1, gc(0, 1))), "its pods start several"},
		{"self-affine first pod anywhere", pSelfOne, plan(pSelfOne, nn(1, gc(0, 1))), ""},
		{"self-affine with a bound match elsewhere", pSelfBound, plan(pSelfBound, nn(0, gc(0, 3))), "bound pods matching them exist"},
		{"self-affine joins the bound match", pSelfBound, plan(pSelfBound, nn(1, gc(0, 3))), ""},
		{"two terms, two different pods", pTwo, plan(pTwo, nn(2, gc(0, 1), gc(1, 1), gc(2, 1))), "no other pod matching all its affinity terms"},
		{"two terms, one pod", pTwoOne, plan(pTwoOne, nn(2, gc(0, 1), gc(1, 1))), ""},
		{"node without the key", pNoZone, withExisting(plan(pNoZone, nn(0, gc(0, 1), gc(1, 1))), 0, gc(0, 1)), `node "bare", which has no topology.kubernetes.io/zone label`},
		{"two seeds that match each other", pSeeds, plan(pSeeds, nn(0, gc(0, 1)), nn(1, gc(1, 1))), "cannot both bind first"},
		{"mutual groups in one zone", pSeeds, plan(pSeeds, nn(0, gc(0, 1)), nn(2, gc(1, 1))), ""},
	})
}

func TestValidateTopologySpread(t *testing.T) {
	zoneSpread := func(name string, n int, minDomains int32) PodGroup {
		g := group(name, n, 100, lbl("app", "web"))
		g.TopologySpread = []TopologySpread{{MaxSkew: 1, TopologyKey: LabelZone, WhenUnsatisfiable: DoNotSchedule,
			Selector: sel("app", "web"), MinDomains: minDomains}}
		return g
	}
	p4 := baseProblem(zoneSpread("web", 4, 0))

	// A third zone with an offering the group can use, one it cannot use, or none at all.
	p3 := baseProblem(zoneSpread("web", 4, 0))
	p3.Offerings = append(p3.Offerings, offering("small-c", "c", 2, 8, 10, 0.1))
	p3.Zones = []string{"a", "b", "c"}
	p3Tainted := baseProblem(zoneSpread("web", 4, 0))
	tc := offering("small-c", "c", 2, 8, 10, 0.1)
	tc.Taints = []Taint{{Key: "dedicated", Value: "x", Effect: NoSchedule}}
	p3Tainted.Offerings = append(p3Tainted.Offerings, tc)
	p3Tainted.Zones = []string{"a", "b", "c"}
	p3Empty := baseProblem(zoneSpread("web", 4, 0))
	p3Empty.Zones = []string{"a", "b", "c"}

	pMin := baseProblem(zoneSpread("web", 4, 3))
	pMin2 := baseProblem(zoneSpread("web", 2, 3))

	// Five matching pods already bound in zone a.
	var five []BoundPod
	for _, name := range []string{"w0", "w1", "w2", "w3", "w4"} {
		five = append(five, bound(name, lbl("app", "web"), 100))
	}
	pSkewed := baseProblem(zoneSpread("web", 3, 0))
	pSkewed.Nodes = []ExistingNode{existing("n1", "a", five...)}
	// The same five pods in another namespace do not count.
	var fiveOther []BoundPod
	for _, bp := range five {
		bp.Ref.Namespace = "other"
		fiveOther = append(fiveOther, bp)
	}
	pOtherNS := baseProblem(zoneSpread("web", 2, 0))
	pOtherNS.Nodes = []ExistingNode{existing("n1", "a", fiveOther...)}

	// Hostname spread with an empty existing node that counts as a domain with 0 pods.
	hostSpread := group("web", 2, 100, lbl("app", "web"))
	hostSpread.TopologySpread = []TopologySpread{{MaxSkew: 1, TopologyKey: LabelHostname, WhenUnsatisfiable: DoNotSchedule, Selector: sel("app", "web")}}
	pHost := baseProblem(hostSpread)
	pHost.Nodes = []ExistingNode{existing("n1", "a")}

	soft := zoneSpread("web", 4, 0)
	soft.TopologySpread[0].WhenUnsatisfiable = ScheduleAnyway
	pSoft := baseProblem(soft)

	// Node affinity limits the domains to zone a.
	onlyA := zoneSpread("web", 4, 0)
	onlyA.NodeAffinity = NodeSelectorTerms{{req(LabelZone, OpIn, "a")}}
	pOnlyA := baseProblem(onlyA)

	// Another group's pods match the selector and count.
	pOthers := baseProblem(zoneSpread("web1", 1, 0), group("web2", 4, 100, lbl("app", "web")))

	runPlanCases(t, []planCase{
		{"3/1 rejected", p4, plan(p4, nn(0, gc(0, 3)), nn(1, gc(0, 1))), `group "ns/web": topology spread on topology.kubernetes.io/zone (maxSkew 1) violated: topology.kubernetes.io/zone=a has 3 matching pods, minimum 1 in topology.kubernetes.io/zone=b: skew 2`},
		{"2/2 accepted", p4, plan(p4, nn(0, gc(0, 2)), nn(1, gc(0, 2))), ""},
		{"4/0 rejected", p4, plan(p4, nn(0, gc(0, 4))), "skew 4"},
		{"empty third zone with an offering", p3, plan(p3, nn(0, gc(0, 2)), nn(1, gc(0, 2))), "minimum 0 in topology.kubernetes.io/zone=c"},
		{"three zones 2/1/1", p3, plan(p3, nn(0, gc(0, 2)), nn(1, gc(0, 1)), nn(3, gc(0, 1))), ""},
		{"third zone only tainted", p3Tainted, plan(p3Tainted, nn(0, gc(0, 2)), nn(1, gc(0, 2))), ""},
		{"third zone without offerings", p3Empty, plan(p3Empty, nn(0, gc(0, 2)), nn(1, gc(0, 2))), ""},
		{"minDomains 3, two zones, 2/2", pMin, plan(pMin, nn(0, gc(0, 2)), nn(1, gc(0, 2))), "only 2 domains, fewer than minDomains 3"},
		{"minDomains 3, two zones, 1/1", pMin2, plan(pMin2, nn(0, gc(0, 1)), nn(1, gc(0, 1))), ""},
		{"existing skew, fill the short zone", pSkewed, plan(pSkewed, nn(1, gc(0, 3))), ""},
		{"existing skew, add to the long zone", pSkewed, plan(pSkewed, nn(0, gc(0, 3))), "zone=a has 8 matching pods"},
		{"other namespace not counted", pOtherNS, plan(pOtherNS, nn(0, gc(0, 1)), nn(1, gc(0, 1))), ""},
		{"hostname: two on a node", pHost, plan(pHost, nn(0, gc(0, 2))), `new node 0 (offering "small-a") has 2 matching pods, minimum 0 in node "n1"`},
		{"hostname: one per node", pHost, plan(pHost, nn(0, gc(0, 1)), nn(0, gc(0, 1))), ""},
		{"ScheduleAnyway is soft", pSoft, plan(pSoft, nn(0, gc(0, 4))), ""},
		{"affinity narrows the domains", pOnlyA, plan(pOnlyA, nn(0, gc(0, 4))), ""},
		{"other group's pods counted", pOthers, plan(pOthers, nn(1, gc(1, 4), gc(0, 1))), "zone=b has 5 matching pods"},
		{"other group's pods counted, short zone", pOthers, plan(pOthers, nn(1, gc(1, 4)), nn(0, gc(0, 1))), ""},
	})
}
