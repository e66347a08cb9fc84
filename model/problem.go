package model

import (
	"errors"
	"fmt"
	"math"
)

// Validate checks that p is structurally sound before anything solves it: names and IDs present and unique
// (groups, pods across groups and existing nodes, offerings, nodes, pools, zones), no negative quantities or
// prices, offerings and nodes that name only known NodePools, well-formed requirements, selectors,
// tolerations, affinity and spread terms, host ports in range, and NodePool requirements that some node
// could satisfy. It returns every problem found, joined, each naming the object.
func (p *Problem) Validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}

	pools := make(map[string]bool, len(p.Pools))
	for i := range p.Pools {
		np := &p.Pools[i]
		name := fmt.Sprintf("pool %q", np.Name)
		switch {
		case np.Name == "":
			add(fmt.Errorf("pool %d: empty name", i))
		case pools[np.Name]:
			add(fmt.Errorf("%s: duplicate name", name))
		}
		pools[np.Name] = true
		if err := np.Requirements.Satisfiable(); err != nil {
			add(fmt.Errorf("%s: requirements: %w", name, err))
		}
		add(nonNegative(name+": limits", np.Limits))
		add(validateTaints(name, np.Taints))
		add(validateTaints(name+": startup", np.StartupTaints))
	}

	pods := make(map[PodRef]string)
	notePod := func(ref PodRef, owner string) {
		if prev, dup := pods[ref]; dup {
			add(fmt.Errorf("%s: pod %s also in %s", owner, ref, prev))
			return
		}
		pods[ref] = owner
	}

	groups := make(map[string]bool, len(p.Groups))
	for i := range p.Groups {
		g := &p.Groups[i]
		name := fmt.Sprintf("group %q", g.Name)
		switch {
		case g.Name == "":
			name = fmt.Sprintf("group %d", i)
			add(fmt.Errorf("%s: empty name", name))
		case groups[g.Name]:
			add(fmt.Errorf("%s: duplicate name", name))
		}
		groups[g.Name] = true
		for _, ref := range g.Pods {
			notePod(ref, name)
		}
		add(g.validate(name))
	}

	offerings := make(map[string]bool, len(p.Offerings))
	for i := range p.Offerings {
		o := &p.Offerings[i]
		name := fmt.Sprintf("offering %q", o.ID)
		switch {
		case o.ID == "":
			name = fmt.Sprintf("offering %d", i)
			add(fmt.Errorf("%s: empty ID", name))
		case offerings[o.ID]:
			add(fmt.Errorf("%s: duplicate ID", name))
		}
		offerings[o.ID] = true
		if !pools[o.NodePool] {
			add(fmt.Errorf("%s: unknown NodePool %q", name, o.NodePool))
		}
		if math.IsNaN(o.Price) || math.IsInf(o.Price, 0) || o.Price < 0 {
			add(fmt.Errorf("%s: price %v is not a finite non-negative number", name, o.Price))
		}
		add(nonNegative(name+": capacity", o.Capacity))
		add(nonNegative(name+": allocatable", o.Allocatable))
		add(validateTaints(name, o.Taints))
		if o.MaxCount < 0 {
			add(fmt.Errorf("%s: max count %d is negative (0 means unlimited)", name, o.MaxCount))
		}
		if len(o.Resident) > 0 && o.MaxCount != 1 {
			add(fmt.Errorf("%s: resident pods need a max count of 1, not %d", name, o.MaxCount))
		}
		for _, gc := range o.Resident {
			switch {
			case gc.Group < 0 || gc.Group >= len(p.Groups):
				add(fmt.Errorf("%s: resident group index %d out of range", name, gc.Group))
			case gc.Count <= 0 || gc.Count > p.Groups[gc.Group].Demand():
				add(fmt.Errorf("%s: %d resident pods of group %q, which has %d", name, gc.Count, p.Groups[gc.Group].Name, p.Groups[gc.Group].Demand()))
			}
		}
		if z, ok := o.Labels[LabelZone]; ok && o.Zone != "" && z != o.Zone {
			add(fmt.Errorf("%s: label %s=%s disagrees with zone %q", name, LabelZone, z, o.Zone))
		}
	}

	nodes := make(map[string]bool, len(p.Nodes))
	for i := range p.Nodes {
		n := &p.Nodes[i]
		name := fmt.Sprintf("node %q", n.Name)
		switch {
		case n.Name == "":
			name = fmt.Sprintf("node %d", i)
			add(fmt.Errorf("%s: empty name", name))
		case nodes[n.Name]:
			add(fmt.Errorf("%s: duplicate name", name))
		}
		nodes[n.Name] = true
		if n.NodePool != "" && !pools[n.NodePool] {
			add(fmt.Errorf("%s: unknown NodePool %q", name, n.NodePool))
		}
		if math.IsNaN(n.Price) || math.IsInf(n.Price, 0) || n.Price < 0 {
			add(fmt.Errorf("%s: price %v is not a finite non-negative number", name, n.Price))
		}
		add(nonNegative(name+": capacity", n.Capacity))
		add(nonNegative(name+": allocatable", n.Allocatable))
		add(validateTaints(name, n.Taints))
		for j := range n.Pods {
			bp := &n.Pods[j]
			pname := fmt.Sprintf("%s: bound pod %s", name, bp.Ref)
			notePod(bp.Ref, name)
			add(nonNegative(pname+": requests", bp.Requests))
			add(validatePorts(pname, bp.HostPorts))
			for k, t := range bp.PodAntiAffinity {
				add(t.validate(fmt.Sprintf("%s: anti-affinity term %d", pname, k)))
			}
		}
	}

	zones := make(map[string]bool, len(p.Zones))
	for _, z := range p.Zones {
		switch {
		case z == "":
			add(errors.New("zones: empty zone name"))
		case zones[z]:
			add(fmt.Errorf("zones: duplicate zone %q", z))
		}
		zones[z] = true
	}
	return errors.Join(errs...)
}

// validate checks one group's own fields; name prefixes the messages.
func (g *PodGroup) validate(name string) error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(nonNegative(name+": requests", g.Requests))
	for _, k := range sortedKeys(g.NodeSelector) {
		if err := ValidateLabelKey(k); err != nil {
			add(fmt.Errorf("%s: nodeSelector: %w", name, err))
		}
	}
	if err := g.NodeAffinity.Validate(); err != nil {
		add(fmt.Errorf("%s: node affinity: %w", name, err))
	}
	for i, pt := range g.PreferredAffinity {
		if err := pt.Term.Validate(); err != nil {
			add(fmt.Errorf("%s: preferred node affinity %d: %w", name, i, err))
		}
	}
	for _, tol := range g.Tolerations {
		if err := tol.Validate(); err != nil {
			add(fmt.Errorf("%s: %w", name, err))
		}
	}
	add(validatePorts(name, g.HostPorts))
	for i, t := range g.PodAffinity {
		add(t.validate(fmt.Sprintf("%s: pod affinity term %d", name, i)))
	}
	for i, t := range g.PodAntiAffinity {
		add(t.validate(fmt.Sprintf("%s: pod anti-affinity term %d", name, i)))
	}
	for i, t := range g.PreferredAntiAffinity {
		add(t.validate(fmt.Sprintf("%s: preferred pod anti-affinity term %d", name, i)))
	}
	for i, c := range g.TopologySpread {
		add(c.validate(fmt.Sprintf("%s: topology spread %d", name, i)))
	}
	return errors.Join(errs...)
}

func (t PodAffinityTerm) validate(name string) error {
	if t.TopologyKey == "" {
		return fmt.Errorf("%s: empty topology key", name)
	}
	if err := ValidateLabelKey(t.TopologyKey); err != nil {
		return fmt.Errorf("%s: topology key: %w", name, err)
	}
	if err := t.Selector.Validate(); err != nil {
		return fmt.Errorf("%s: selector: %w", name, err)
	}
	return nil
}

func (c TopologySpread) validate(name string) error {
	switch {
	case c.MaxSkew < 1:
		return fmt.Errorf("%s: maxSkew %d < 1", name, c.MaxSkew)
	case c.TopologyKey == "":
		return fmt.Errorf("%s: empty topology key", name)
	case c.WhenUnsatisfiable != DoNotSchedule && c.WhenUnsatisfiable != ScheduleAnyway:
		return fmt.Errorf("%s: unknown whenUnsatisfiable %q", name, c.WhenUnsatisfiable)
	case c.MinDomains < 0:
		return fmt.Errorf("%s: minDomains %d < 0", name, c.MinDomains)
	case c.MinDomains > 0 && c.WhenUnsatisfiable != DoNotSchedule:
		return fmt.Errorf("%s: minDomains needs whenUnsatisfiable DoNotSchedule", name)
	}
	if err := ValidateLabelKey(c.TopologyKey); err != nil {
		return fmt.Errorf("%s: topology key: %w", name, err)
	}
	if err := c.Selector.Validate(); err != nil {
		return fmt.Errorf("%s: selector: %w", name, err)
	}
	return nil
}

// nonNegative reports the negative entries of r.
func nonNegative(what string, r Resources) error {
	var errs []error
	for _, k := range r.Names() {
		if r[k] < 0 {
			errs = append(errs, fmt.Errorf("%s: %s is negative (%d)", what, k, r[k]))
		}
	}
	return errors.Join(errs...)
}

// validatePorts accepts 0 (no host port) and 1..65535.
func validatePorts(what string, ports []int32) error {
	for _, p := range ports {
		if p < 0 || p > 65535 {
			return fmt.Errorf("%s: host port %d out of range", what, p)
		}
	}
	return nil
}

func validateTaints(what string, taints []Taint) error {
	var errs []error
	for _, t := range taints {
		switch t.Effect {
		case NoSchedule, PreferNoSchedule, NoExecute:
		default:
			errs = append(errs, fmt.Errorf("%s: taint %s: unknown effect %q", what, t, t.Effect))
		}
		if err := ValidateLabelKey(t.Key); err != nil {
			errs = append(errs, fmt.Errorf("%s: taint %s: %w", what, t, err))
		}
	}
	return errors.Join(errs...)
}
