package mip

import (
	"math"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
)

// roundAndComplete turns an LP solution into a plan: the whole nodes of the LP (every column's value rounded
// down) are kept, and the greedy places what is left, on those nodes first. Near the LP's value when the LP
// uses many nodes, and cheap, it is the integer master's incumbent and a candidate of its own.
func (m *master) roundAndComplete(x []float64) (*model.Plan, error) {
	floor := make([]float64, len(x))
	for j, v := range x {
		floor[j] = math.Floor(v + 1e-9)
	}
	partial := m.plan(floor)
	partial.Unschedulable = nil
	return greedy.Complete(m.c.Src, partial)
}
