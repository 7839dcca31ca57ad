package main

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// chartFormats are the extensions --chart accepts.
var chartFormats = []string{".svg", ".png", ".pdf"}

// checkChartPath returns an error if path does not name a format the chart
// can be written in, so that a typo fails before the run, not after.
func checkChartPath(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range chartFormats {
		if ext == f {
			return nil
		}
	}
	return fmt.Errorf("--chart %s: the file name must end in %s", path, strings.Join(chartFormats, ", "))
}

// writeChart draws the run's samples in three panels sharing the time
// axis: throughput, wait quantiles, and the pool's objects.
func writeChart(path, title string, samples []sample) error {
	rate, wait, objects := plot.New(), plot.New(), plot.New()
	rate.Title.Text = title
	rate.Y.Label.Text = "per second"
	wait.Y.Label.Text = "wait for a connection (ms)"
	objects.Y.Label.Text = "objects"
	objects.X.Label.Text = "time (s)"

	series := func(p *plot.Plot, name string, c color.Color, dashed bool, y func(sample) float64) error {
		xys := make(plotter.XYs, len(samples))
		for i, s := range samples {
			xys[i].X, xys[i].Y = s.at.Seconds(), y(s)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = c
		l.Width = vg.Points(1.5)
		if dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(name, l)
		return nil
	}
	blue := color.RGBA{R: 31, G: 119, B: 180, A: 255}
	orange := color.RGBA{R: 255, G: 127, B: 14, A: 255}
	green := color.RGBA{R: 44, G: 160, B: 44, A: 255}
	red := color.RGBA{R: 214, G: 39, B: 40, A: 255}
	for _, s := range []struct {
		p      *plot.Plot
		name   string
		c      color.Color
		dashed bool
		y      func(sample) float64
	}{
		{rate, "requests", blue, false, func(s sample) float64 { return s.reqRate }},
		{rate, "audit tasks", orange, true, func(s sample) float64 { return s.taskRate }},
		{wait, "p50", blue, false, func(s sample) float64 { return ms(s.waitP50) }},
		{wait, "p99", red, false, func(s sample) float64 { return ms(s.waitP99) }},
		{objects, "in use", blue, false, func(s sample) float64 { return float64(s.pool.InUse) }},
		{objects, "idle", green, false, func(s sample) float64 { return float64(s.pool.Idle) }},
		{objects, "waiting takers", red, true, func(s sample) float64 { return float64(s.pool.Waiting) }},
		{objects, "tasks queued", orange, true, func(s sample) float64 { return float64(s.tasks.Queued) }},
	} {
		if err := series(s.p, s.name, s.c, s.dashed, s.y); err != nil {
			return fmt.Errorf("chart: %w", err)
		}
	}
	plots := [][]*plot.Plot{{rate}, {wait}, {objects}}
	for _, row := range plots {
		row[0].Legend.Top = true
		row[0].Y.Min = 0
		row[0].X.Min = 0
		row[0].Add(plotter.NewGrid())
	}

	const w, h = 8 * vg.Inch, 9 * vg.Inch
	var canvas vg.CanvasWriterTo
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		canvas = vgsvg.New(w, h)
	case ".png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))}
	case ".pdf":
		canvas = vgpdf.New(w, h)
	default:
		return checkChartPath(path)
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: 3, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12), PadY: vg.Points(10)}
	cells := plot.Align(plots, tiles, dc)
	for i, row := range plots {
		row[0].Draw(cells[i][0])
	}
	return writeFile(path, canvas)
}

func writeFile(path string, c io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("chart: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

func ms(d interface{ Seconds() float64 }) float64 { return d.Seconds() * 1000 }
