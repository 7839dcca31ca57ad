package main

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/actorpool/actorpool/bench/workload"
)

// panel is one (size, hold) slice of the contended matrix, drawn against
// the number of goroutines.
type panel struct {
	size int
	hold float64 // seconds, for the title only
	name string
}

func panels(r *poolResults) []panel {
	var ps []panel
	seen := map[string]bool{}
	for _, c := range r.cells {
		name := fmt.Sprintf("size %d, hold %s", c.Size, workload.HoldName(c.Hold))
		if !seen[name] {
			seen[name] = true
			ps = append(ps, panel{size: c.Size, hold: c.Hold.Seconds(), name: name})
		}
	}
	return ps
}

// series returns, for one pool and one panel, the points (goroutines,
// value) of a metric, scaled, leaving out missing ones.
func series(r *poolResults, pn panel, pool, unit string, scale float64) plotter.XYs {
	var xys plotter.XYs
	for _, c := range r.cells {
		if c.Size != pn.size || c.Hold.Seconds() != pn.hold {
			continue
		}
		v := r.contended[c][pool].get(unit)
		if math.IsNaN(v) || v <= 0 {
			continue
		}
		xys = append(xys, plotter.XY{X: float64(c.Goroutines), Y: v * scale})
	}
	return xys
}

// linePlot draws one panel: a line per pool of a metric against the number
// of goroutines, on a logarithmic x axis, and a logarithmic y axis if logY.
// It adds each pool's line to legend, if not nil.
func linePlot(r *poolResults, pn panel, title, unit, ylabel string, scale float64, logY bool, legend *plot.Legend) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "goroutines"
	p.Y.Label.Text = ylabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks(goroutineTicks())
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = ticks125{}
	} else {
		p.Y.Min = 0
	}
	for i, c := range r.pools {
		xys := series(r, pn, c.Name, unit, scale)
		if len(xys) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7)
		l.Width = vg.Points(1.5)
		s.Color = plotutil.Color(i)
		s.Shape = plotutil.Shape(i)
		p.Add(l, s)
		if legend != nil {
			legend.Add(c.Name, l, s)
		}
	}
	return p, nil
}

// ticks125 marks a logarithmic axis at 1, 2 and 5 times each power of ten,
// so that an axis spanning less than a decade still has labels.
type ticks125 struct{}

func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	if lo <= 0 || hi <= lo {
		return ts
	}
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= lo && v <= hi {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
			}
		}
	}
	return ts
}

func goroutineTicks() []plot.Tick {
	var ts []plot.Tick
	for _, g := range workload.Goroutines {
		ts = append(ts, plot.Tick{Value: float64(g), Label: fmt.Sprint(g)})
	}
	return ts
}

// legendWidth is the strip on the right of a chart that holds the legend.
const legendWidth = 2.5 * vg.Inch

// drawGrid lays plots out in rows and columns on one SVG image, with the
// legend in a strip on the right.
func drawGrid(w io.Writer, plots [][]*plot.Plot, legend plot.Legend, width, height vg.Length) error {
	img := vgsvg.New(width+legendWidth, height)
	full := draw.New(img)
	legend.Top = true
	legend.Left = true
	legend.Draw(draw.Crop(full, width+vg.Millimeter*4, 0, 0, -vg.Inch/2))
	dc := draw.Crop(full, 0, -legendWidth, 0, 0)
	t := draw.Tiles{
		Rows: len(plots), Cols: len(plots[0]),
		PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2,
	}
	canvases := plot.Align(plots, t, dc)
	for i := range plots {
		for j := range plots[i] {
			if plots[i][j] != nil {
				plots[i][j].Draw(canvases[i][j])
			}
		}
	}
	_, err := img.WriteTo(w)
	return err
}

// drawThroughput draws throughput against goroutines, one line per pool,
// one panel per pool size and hold.
func drawThroughput(w io.Writer, r *poolResults) error {
	pns := panels(r)
	cols := 2
	rows := (len(pns) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	legend := plot.NewLegend()
	for i, pn := range pns {
		l := &legend
		if i > 0 {
			l = nil
		}
		p, err := linePlot(r, pn, "Throughput, "+pn.name, "ops/s", "millions of takes per second (log)", 1e-6, true, l)
		if err != nil {
			return err
		}
		plots[i/cols][i%cols] = p
	}
	return drawGrid(w, plots, legend, vg.Length(cols)*6*vg.Inch, vg.Length(rows)*4.5*vg.Inch)
}

// drawLatency draws the 50th, 99th and 99.9th percentiles of the time to
// take an object against goroutines: a row per percentile, a column per
// pool size and hold.
func drawLatency(w io.Writer, r *poolResults) error {
	pns := panels(r)
	qs := []struct{ unit, name string }{{"p50-ns", "p50"}, {"p99-ns", "p99"}, {"p99.9-ns", "p99.9"}}
	plots := make([][]*plot.Plot, len(qs))
	legend := plot.NewLegend()
	for i, q := range qs {
		plots[i] = make([]*plot.Plot, len(pns))
		for j, pn := range pns {
			l := &legend
			if i > 0 || j > 0 {
				l = nil
			}
			p, err := linePlot(r, pn, q.name+" take latency, "+pn.name, q.unit, "µs (log)", 1e-3, true, l)
			if err != nil {
				return err
			}
			plots[i][j] = p
		}
	}
	return drawGrid(w, plots, legend, vg.Length(len(pns))*5*vg.Inch, vg.Length(len(qs))*4*vg.Inch)
}
