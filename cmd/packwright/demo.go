package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/packwright/packwright/solver/highs"
)

// The demo packs three pod groups onto new nodes of four instance types by a small assignment MIP: integer
// n[t] nodes of type t and x[g][t] pods of group g on type t, minimising hourly cost.
type demoType struct {
	name   string
	cpu    float64 // millicores allocatable
	memMiB float64
	price  float64
}

type demoGroup struct {
	name   string
	count  float64
	cpu    float64
	memMiB float64
}

var (
	demoTypes = []demoType{
		{"m5.large", 1930, 7000, 0.096},
		{"m5.xlarge", 3920, 14600, 0.192},
		{"c5.2xlarge", 7910, 14000, 0.34},
		{"r5.xlarge", 3920, 30000, 0.252},
	}
	demoGroups = []demoGroup{
		{"web", 12, 500, 512},
		{"api", 6, 1000, 2048},
		{"cache", 3, 500, 8192},
	}
)

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	deadline := fs.Duration("deadline", time.Second, "solve deadline")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !highs.Available() {
		return highs.ErrUnavailable
	}
	nt, ng := len(demoTypes), len(demoGroups)
	// Columns: n[t] (nt), then x[g][t] (ng*nt).
	ncol := nt + ng*nt
	m := &highs.Model{ColCost: make([]float64, ncol), ColLower: make([]float64, ncol), ColUpper: make([]float64, ncol),
		Integrality: make([]bool, ncol), RowStart: []int{0}}
	for j := range m.ColUpper {
		m.ColUpper[j] = highs.Inf
		m.Integrality[j] = true
	}
	for t, it := range demoTypes {
		m.ColCost[t] = it.price
	}
	x := func(g, t int) int { return nt + g*nt + t }
	addRow := func(lo, hi float64, idx []int, val []float64) {
		m.RowLower, m.RowUpper = append(m.RowLower, lo), append(m.RowUpper, hi)
		m.RowIndex, m.RowValue = append(m.RowIndex, idx...), append(m.RowValue, val...)
		m.RowStart = append(m.RowStart, len(m.RowIndex))
	}
	for g, pg := range demoGroups { // every pod placed
		idx, val := []int{}, []float64{}
		for t := range demoTypes {
			idx, val = append(idx, x(g, t)), append(val, 1)
		}
		addRow(pg.count, pg.count, idx, val)
	}
	for t, it := range demoTypes { // capacity per type: sum_g r_g x[g][t] <= a_t n[t]
		for _, res := range []struct {
			cap float64
			req func(demoGroup) float64
		}{{it.cpu, func(g demoGroup) float64 { return g.cpu }}, {it.memMiB, func(g demoGroup) float64 { return g.memMiB }}} {
			idx, val := []int{t}, []float64{-res.cap}
			for g, pg := range demoGroups {
				idx, val = append(idx, x(g, t)), append(val, res.req(pg))
			}
			addRow(math.Inf(-1), 0, idx, val)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, *deadline)
	defer cancel()
	began := time.Now()
	res, err := highs.Solve(ctx, m, highs.Options{}, nil)
	if err != nil {
		return fmt.Errorf("solve: %w", err)
	}
	if !res.HasSolution {
		return fmt.Errorf("solve: no solution (%v)", res.Status)
	}
	fmt.Fprintf(stdout, "Demo: %d pods in %d groups onto new nodes (HiGHS %s)\n\n", 21, ng, highs.Version())
	fmt.Fprintf(stdout, "%-12s %5s %9s  %s\n", "TYPE", "NODES", "$/HOUR", "PODS")
	for t, it := range demoTypes {
		n := math.Round(res.ColValues[t])
		if n == 0 {
			continue
		}
		pods := ""
		for g, pg := range demoGroups {
			if c := math.Round(res.ColValues[x(g, t)]); c > 0 {
				pods += fmt.Sprintf("%s×%g ", pg.name, c)
			}
		}
		fmt.Fprintf(stdout, "%-12s %5g %9.4f  %s\n", it.name, n, n*it.price, pods)
	}
	fmt.Fprintf(stdout, "\nstatus %v, cost $%.4f/hour, lower bound $%.4f, gap %.2f%%, %v\n",
		res.Status, res.Objective, res.MIPDualBound, 100*res.MIPGap, time.Since(began).Round(time.Millisecond))
	return nil
}
