package prep

import (
	"math"
	"slices"

	"github.com/packwright/packwright/model"
)

// NodePool weights as a cost: a pod on a new node pays WeightUnit for every weight above its pool's at which
// some offering is compatible with its group. A move that lifts one pod to a higher-weight pool saves at least
// WeightUnit and costs at most one new node, so with WeightUnit above the dearest offering a plan of least
// price-plus-penalty honours the weights first and minimises price second (a lexicographic objective).

// compileWeights fills the weights of the offerings and groups; Tiered stays false when they are all equal.
func (c *Problem) compileWeights() {
	weights, differ := c.Src.OfferingWeights()
	for i := range c.Offerings {
		c.Offerings[i].Weight = weights[i]
	}
	c.Tiered = differ
	if !differ {
		return
	}
	maxPrice := 0.0
	for _, o := range c.Offerings {
		maxPrice = math.Max(maxPrice, o.Price)
	}
	c.WeightUnit = math.Max(1.1*maxPrice, 1e-6)
	for gi := range c.Groups {
		g := &c.Groups[gi]
		for _, o := range g.Offerings {
			if w := weights[o]; !slices.Contains(g.Weights, w) {
				g.Weights = append(g.Weights, w)
			}
		}
		slices.SortFunc(g.Weights, func(a, b int32) int { return int(b) - int(a) })
	}
}

// WeightPenalty is the penalty of one pod of group g on a new node of offering o (0 when not Tiered).
func (c *Problem) WeightPenalty(g, o int) float64 {
	if !c.Tiered {
		return 0
	}
	w := c.Offerings[o].Weight
	above := 0
	for _, x := range c.Groups[g].Weights {
		if x <= w {
			break
		}
		above++
	}
	return c.WeightUnit * float64(above)
}

// PlanPenalty is the summed WeightPenalty of a plan's pods on new nodes (0 when not Tiered). Entries out of
// range are skipped: Plan.Validate reports them.
func (c *Problem) PlanPenalty(pl *model.Plan) float64 {
	if !c.Tiered || pl == nil {
		return 0
	}
	sum := 0.0
	for _, nn := range pl.NewNodes {
		if nn.Offering < 0 || nn.Offering >= len(c.Offerings) {
			continue
		}
		for _, gc := range nn.Pods {
			if gc.Group >= 0 && gc.Group < len(c.Groups) {
				sum += float64(gc.Count) * c.WeightPenalty(gc.Group, nn.Offering)
			}
		}
	}
	return sum
}
