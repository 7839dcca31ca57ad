package console

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// A sample is an actor's depth at a time: its tasks not yet ended
// (queued, scheduled, retrying and running).
type sample struct {
	at    time.Time
	depth int
}

func depth(s Stats) int { return s.Queued + s.Scheduled + s.Retrying + s.Running }

// Run samples the actors' depth every Options.Interval, for the chart,
// until ctx ends. A failed sample is logged and the next one tried.
func (c *Console) Run(ctx context.Context) {
	t := time.NewTicker(c.opts.Interval)
	defer t.Stop()
	for {
		if err := c.Sample(ctx); err != nil && ctx.Err() == nil {
			c.opts.Logger.Error("console: sample the actors' depth", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sample reads every actor's depth once and keeps it for the chart.
func (c *Console) Sample(ctx context.Context) error {
	actors, err := c.admin.Actors(ctx)
	if err != nil {
		return err
	}
	c.record(time.Now(), actors)
	return nil
}

// record keeps the depth of actors at time now; an actor gone from the
// schema loses its samples.
func (c *Console) record(now time.Time, actors []ActorInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := make(map[string]bool, len(actors))
	for _, a := range actors {
		seen[a.Name] = true
		s := append(c.samples[a.Name], sample{at: now, depth: depth(a.Stats)})
		if n := len(s) - c.opts.Samples; n > 0 {
			s = append(s[:0:0], s[n:]...)
		}
		c.samples[a.Name] = s
	}
	for name := range c.samples {
		if !seen[name] {
			delete(c.samples, name)
		}
	}
}

// A chart is the depth of one actor over the last window, drawn as an
// SVG polyline in a box of chartW by chartH.
type chart struct {
	Points string // the polyline's points
	Max    int    // the depth at the top of the box
	Last   int    // the newest sample
	Span   string // how long the samples cover
	Count  int
}

const (
	chartW = 300
	chartH = 60
)

// chart draws the samples of actor; the x axis covers the whole window
// the console keeps, newest at the right, so that the chart moves at the
// speed of time.
func (c *Console) chart(actor string, now time.Time) chart {
	c.mu.Lock()
	s := append([]sample(nil), c.samples[actor]...)
	c.mu.Unlock()
	ch := chart{Max: 1, Count: len(s)}
	if len(s) == 0 {
		return ch
	}
	window := c.opts.Interval * time.Duration(c.opts.Samples)
	for _, p := range s {
		ch.Max = max(ch.Max, p.depth)
	}
	ch.Last = s[len(s)-1].depth
	ch.Span = now.Sub(s[0].at).Round(time.Second).String()
	var b strings.Builder
	for i, p := range s {
		age := now.Sub(p.at)
		x := chartW * (1 - float64(age)/float64(window))
		y := chartH * (1 - float64(p.depth)/float64(ch.Max))
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f,%.1f", min(max(x, 0), chartW), y)
	}
	ch.Points = b.String()
	return ch
}
