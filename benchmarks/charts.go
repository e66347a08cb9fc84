package benchmarks

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Chart file names that WriteCharts writes.
const (
	ChartCost = "cost.png"
	ChartTime = "time.png"
	ChartGap  = "gap.png"
)

// WriteCharts draws three PNG charts into dir, one line per generator and catalog against pending pods
// (log scale): cost (Packwright solid, greedy dashed, the peer dotted when there is one; USD/hour, log scale),
// solve time (the same, ms, log scale) and gap (percent). Workloads whose solver failed are left out of the lines. It returns the file names.
func WriteCharts(dir string, rs []Result) ([]string, error) {
	order, by := seriesOf(rs)
	charts := []struct {
		file, title, ylabel string
		logY                bool
		values              []func(r Result) (float64, bool)
		labels              []string
	}{
		{ChartCost, "Cost of the new nodes", "USD per hour", true,
			[]func(Result) (float64, bool){
				func(r Result) (float64, bool) { return r.Packwright.Cost, ok(r.Packwright) && r.Packwright.Cost > 0 },
				func(r Result) (float64, bool) { return r.Greedy.Cost, ok(r.Greedy) && r.Greedy.Cost > 0 },
				func(r Result) (float64, bool) { return peerValue(r, func(o *Outcome) float64 { return o.Cost }) },
			}, []string{"", " greedy", " karpenter"}},
		{ChartTime, "Solve time", "milliseconds", true,
			[]func(Result) (float64, bool){
				func(r Result) (float64, bool) { return max(ms(r.Packwright.Duration), 0.01), ok(r.Packwright) },
				func(r Result) (float64, bool) { return max(ms(r.Greedy.Duration), 0.01), ok(r.Greedy) },
				func(r Result) (float64, bool) {
					return peerValue(r, func(o *Outcome) float64 { return max(ms(o.Duration), 0.01) })
				},
			}, []string{"", " greedy", " karpenter"}},
		{ChartGap, "Gap to the lower bound", "percent", false,
			[]func(Result) (float64, bool){
				func(r Result) (float64, bool) {
					return 100 * r.Packwright.Gap, ok(r.Packwright) && r.Packwright.LowerBound > 0
				},
			}, []string{""}},
	}
	var files []string
	for _, c := range charts {
		p := plot.New()
		p.Title.Text = c.title
		p.X.Label.Text = "pending pods"
		p.Y.Label.Text = c.ylabel
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		if c.logY {
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		}
		legend := plot.NewLegend()
		legend.Top, legend.Left = true, true
		p.Add(plotter.NewGrid())
		points := 0
		var all plotter.XYs
		for si, s := range order {
			for vi, value := range c.values {
				var xys plotter.XYs
				for _, r := range by[s] {
					if v, good := value(r); good {
						xys = append(xys, plotter.XY{X: float64(r.Pods), Y: v})
					}
				}
				if len(xys) == 0 {
					continue
				}
				points += len(xys)
				all = append(all, xys...)
				l, pts, err := plotter.NewLinePoints(xys)
				if err != nil {
					return nil, fmt.Errorf("chart %s: %w", c.file, err)
				}
				col := plotutil.Color(si)
				l.Color, pts.Color = col, col
				pts.Shape = plotutil.Shape(si)
				switch vi {
				case 1: // greedy: dashed and lighter, so that the Packwright line stands out
					l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
					l.Color = fade(col)
				case 2: // the peer: dotted
					l.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
				}
				p.Add(l, pts)
				legend.Add(s.String()+c.labels[vi], l, pts)
			}
		}
		if points == 0 {
			// A log axis over no data has no range; draw an empty linear chart rather than fail the run.
			p.X.Scale, p.X.Tick.Marker = plot.LinearScale{}, plot.DefaultTicks{}
			p.Y.Scale, p.Y.Tick.Marker = plot.LinearScale{}, plot.DefaultTicks{}
		} else {
			setRanges(p, all, c.logY)
		}
		if err := savePNG(filepath.Join(dir, c.file), p, legend); err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.file, err)
		}
		files = append(files, c.file)
	}
	return files, nil
}

// setRanges sets the axes' ranges from the points with some room around them. gonum/plot widens an empty range
// (one size, or equal values) by ±1, which takes a log axis below zero (a panic) and a gap axis below 0%;
// widening by a factor on log axes and from zero on the linear one avoids both.
func setRanges(p *plot.Plot, xys plotter.XYs, logY bool) {
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, xy := range xys {
		xmin, xmax = math.Min(xmin, xy.X), math.Max(xmax, xy.X)
		ymin, ymax = math.Min(ymin, xy.Y), math.Max(ymax, xy.Y)
	}
	p.X.Min, p.X.Max = xmin/1.25, xmax*1.25
	if logY {
		p.Y.Min, p.Y.Max = ymin/1.25, ymax*1.25
	} else {
		p.Y.Min, p.Y.Max = math.Min(0, ymin), math.Max(ymax*1.1, 1)
	}
}

// Chart geometry: the legend gets its own column right of the plot, so that it never hides a line.
const (
	chartWidth   = 10 * vg.Inch
	chartHeight  = 5 * vg.Inch
	legendWidth  = 2.6 * vg.Inch
	legendMargin = 0.15 * vg.Inch
)

// savePNG draws p with legend beside it into a PNG file.
func savePNG(path string, p *plot.Plot, legend plot.Legend) error {
	img := vgimg.New(chartWidth, chartHeight)
	dc := draw.New(img)
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	legend.Draw(draw.Crop(dc, chartWidth-legendWidth+legendMargin, 0, 0, -legendMargin))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func ok(o Outcome) bool { return o.Status != "error" }

// peerValue is f of the peer's outcome, when there is a valid one.
func peerValue(r Result, f func(*Outcome) float64) (float64, bool) {
	if r.Peer == nil || r.Peer.Status == "error" || r.Peer.Err != "" {
		return 0, false
	}
	v := f(r.Peer)
	return v, v > 0
}

// fade mixes c halfway to white.
func fade(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.RGBA{uint8((r>>8 + 255) / 2), uint8((g>>8 + 255) / 2), uint8((b>>8 + 255) / 2), 255}
}
