package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
)

// Progress modes.
const (
	progressLive  = "live"  // redraw a block in place: for a terminal
	progressLines = "lines" // one line a second: for a log or a pipe
	progressOff   = "off"
)

// tick is how often the monitor samples, for the live display and the
// chart; a line is printed every linesEvery ticks.
const (
	tick       = 250 * time.Millisecond
	linesEvery = 4
)

// A sample is the state of the run at one tick, with the rates and wait
// quantiles of the tick before it: a point of the chart.
type sample struct {
	at               time.Duration
	reqRate          float64 // requests per second
	taskRate         float64 // audit tasks completed per second
	waitP50, waitP99 time.Duration
	pool             actorpool.Stats
	tasks            actor.Stats
}

// A point is what a later tick needs of an earlier one to compute rates,
// and the actor's Stats at the tick.
type point struct {
	at       time.Duration
	requests uint64
	tasks    actor.Stats
	wait     *counts
}

// A monitor samples the run every tick, keeps the samples for the chart,
// and shows progress.
type monitor struct {
	load     *load
	b        backend
	audit    auditActor
	mode     string
	out      io.Writer
	width    int // of the terminal, for the live display
	duration time.Duration

	start   time.Time
	samples []sample
	ring    [linesEvery + 1]point
	ticks   int
	drawn   int // lines of the live block on screen
}

// watch samples until ctx ends, then takes a last sample.
func (m *monitor) watch(ctx context.Context) {
	m.start = now()
	m.ring[0] = m.point()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			m.step(true)
			return
		case <-t.C:
			m.step(false)
		}
	}
}

func (m *monitor) point() point {
	return point{
		at:       now().Sub(m.start),
		requests: m.load.requests.Load(),
		tasks:    m.audit.stats(),
		wait:     m.load.wait.snapshot(),
	}
}

// step samples once and shows what it should.
func (m *monitor) step(last bool) {
	p := m.point()
	if last && p.at-m.ring[m.ticks%len(m.ring)].at < tick/2 {
		// The run ended just after a tick: a sample of a few
		// milliseconds would only add noise.
		return
	}
	m.ticks++
	m.ring[m.ticks%len(m.ring)] = p
	s := m.sampleSince(p, m.ring[(m.ticks-1)%len(m.ring)])
	m.samples = append(m.samples, s)
	switch m.mode {
	case progressLive:
		m.drawLive(s)
	case progressLines:
		if m.ticks%linesEvery == 0 || last {
			back := min(m.ticks, linesEvery)
			m.printLine(m.sampleSince(p, m.ring[(m.ticks-back)%len(m.ring)]))
		}
	}
}

func (m *monitor) sampleSince(p, prev point) sample {
	reqStats, _ := m.b.stats()
	s := sample{at: p.at, pool: reqStats, tasks: p.tasks}
	if secs := (p.at - prev.at).Seconds(); secs > 0 {
		s.reqRate = float64(p.requests-prev.requests) / secs
		s.taskRate = float64(p.tasks.Completed-prev.tasks.Completed) / secs
	}
	w := p.wait.since(prev.wait)
	s.waitP50, s.waitP99 = w.quantile(0.5), w.quantile(0.99)
	return s
}

const linesHeader = "  time     req/s   in use   idle  waiting  wait p50  wait p99   tasks queued   tasks done"

func (m *monitor) printLine(s sample) {
	if m.ticks <= linesEvery {
		fmt.Fprintln(m.out, linesHeader)
	}
	fmt.Fprintf(m.out, "%6s  %8s  %7s  %5d  %7d  %8s  %8s  %13s  %11s\n",
		fmtSeconds(s.at), fmtInt(uint64(s.reqRate)),
		fmt.Sprintf("%d/%d", s.pool.InUse, s.pool.MaxObjects), s.pool.Idle, s.pool.Waiting,
		fmtDur(s.waitP50), fmtDur(s.waitP99), fmtInt(uint64(s.tasks.Queued)), fmtInt(s.tasks.Completed))
}

// drawLive redraws the live block over the previous one.
func (m *monitor) drawLive(s sample) {
	barWidth := max(10, min(40, m.width-30))
	frac := min(1, s.at.Seconds()/m.duration.Seconds())
	lines := []string{
		fmt.Sprintf("  %6s / %s  %s %3.0f%%", fmtSeconds(s.at), fmtSeconds(m.duration), bar(frac, barWidth), frac*100),
		fmt.Sprintf("  pool      %s  %d/%d in use, %d idle, %d waiting",
			slots(s.pool), s.pool.InUse, s.pool.MaxObjects, s.pool.Idle, s.pool.Waiting),
		fmt.Sprintf("  requests  %s/s   wait p50 %s  p99 %s   %s failed",
			fmtInt(uint64(s.reqRate)), fmtDur(s.waitP50), fmtDur(s.waitP99), fmtInt(m.load.failed.Load())),
		fmt.Sprintf("  audit     %s queued%s, %s done, %s/s, %s dead-lettered",
			fmtInt(uint64(s.tasks.Queued)), m.full(s), fmtInt(s.tasks.Completed), fmtInt(uint64(s.taskRate)), fmtInt(s.tasks.DeadLettered)),
	}
	var b strings.Builder
	if m.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", m.drawn)
	}
	for _, l := range lines {
		if m.width > 0 && len([]rune(l)) > m.width {
			l = string([]rune(l)[:m.width])
		}
		b.WriteString("\r\x1b[2K" + l + "\n")
	}
	m.drawn = len(lines)
	io.WriteString(m.out, b.String())
}

// full says when the actor's mailbox is full, so that clients wait to send.
func (m *monitor) full(s sample) string {
	if s.tasks.Blocked > 0 {
		return fmt.Sprintf(" (mailbox full: %d clients wait to send)", s.tasks.Blocked)
	}
	return ""
}

// slots draws one cell per object: in use, idle, or free.
func slots(s actorpool.Stats) string {
	if s.MaxObjects > 32 {
		return bar(float64(s.InUse)/float64(s.MaxObjects), 32)
	}
	return strings.Repeat("■", s.InUse) + strings.Repeat("□", min(s.Idle, s.MaxObjects-s.InUse)) +
		strings.Repeat("·", max(0, s.MaxObjects-s.InUse-s.Idle))
}

// bar draws a bar of width cells filled to frac, in eighths of a cell.
func bar(frac float64, width int) string {
	const eighths = " ▏▎▍▌▋▊▉"
	frac = max(0, min(1, frac))
	n := int(frac * float64(width) * 8)
	full, part := n/8, n%8
	var b strings.Builder
	b.WriteString(strings.Repeat("█", full))
	if full < width {
		b.WriteString(string([]rune(eighths)[part]))
		b.WriteString(strings.Repeat(" ", width-full-1))
	}
	return "▕" + b.String() + "▏"
}

// fmtInt writes n with thousands separated: 1,234,567.
func fmtInt(n uint64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fmtDur writes d with three significant digits at most: 850ns, 12.3µs,
// 4.56ms, 1.20s.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d)
	case d < time.Millisecond:
		return sig3(float64(d)/1e3) + "µs"
	case d < time.Second:
		return sig3(float64(d)/1e6) + "ms"
	}
	return sig3(d.Seconds()) + "s"
}

func sig3(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// fmtSeconds writes d to a tenth of a second, or whole seconds from a
// minute up.
func fmtSeconds(d time.Duration) string {
	if d >= time.Minute {
		return d.Round(time.Second).String()
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}
