package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
)

// A result is what the summary reports: the run's settings and what came
// of them, read after the pools and the actor closed.
type result struct {
	server      string
	clients     int
	elapsed     time.Duration
	interrupted bool
	load        *load
	reqPool     actorpool.Stats
	auditPool   actorpool.Stats
	reqName     string
	auditName   string
	tasks       actor.Stats
	actorName   string
	actorNote   string // what a durable actor left for the next run
	shutdownErr error
}

func (r *result) print(w io.Writer) {
	l := r.load
	done, failed := l.requests.Load(), l.failed.Load()
	how := "ran"
	if r.interrupted {
		how = "stopped by Ctrl-C after"
	}
	fmt.Fprintf(w, "\nactorpool demo %s %s: %d clients against %s\n\n", how, fmtSeconds(r.elapsed), r.clients, r.server)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	secs := max(r.elapsed.Seconds(), 1e-9)
	fmt.Fprintf(tw, "\tdone\tfailed\tper second\t\n")
	fmt.Fprintf(tw, "requests\t%s\t%s\t%s\t\n", fmtInt(done), fmtInt(failed), fmtInt(uint64(float64(done)/secs)))
	fmt.Fprintf(tw, "audit tasks\t%s\t%s\t%s\t\n", fmtInt(r.tasks.Completed), fmtInt(r.tasks.DeadLettered+l.sendFail.Load()),
		fmtInt(uint64(float64(r.tasks.Completed)/secs)))
	tw.Flush()
	fmt.Fprintln(w)

	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	wait, lat := l.wait.snapshot(), l.latency.snapshot()
	fmt.Fprintf(tw, "latency\tp50\tp90\tp99\tp99.9\tmax\t\n")
	for _, row := range []struct {
		name string
		c    *counts
	}{{"pool wait", wait}, {"request", lat}} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", row.name, fmtDur(row.c.quantile(0.5)), fmtDur(row.c.quantile(0.9)),
			fmtDur(row.c.quantile(0.99)), fmtDur(row.c.quantile(0.999)), fmtDur(row.c.max))
	}
	tw.Flush()

	fmt.Fprintln(w)
	r.printPool(w, r.reqName, "requests", r.reqPool)
	r.printPool(w, r.auditName, "audit writes", r.auditPool)
	t := r.tasks
	fmt.Fprintf(w, "actor %q: %s submitted, %s completed, %s retried, %s dead-lettered, %s refused\n",
		r.actorName, fmtInt(t.Submitted), fmtInt(t.Completed), fmtInt(t.Retried), fmtInt(t.DeadLettered), fmtInt(t.Rejected))
	if r.actorNote != "" {
		fmt.Fprintln(w, r.actorNote)
	}

	if errs := l.errs.top(); len(errs) > 0 {
		fmt.Fprintln(w, "\nerrors:")
		for _, e := range errs {
			fmt.Fprintf(w, "  %s × %s\n", fmtInt(uint64(e.n)), e.msg)
		}
	}
	if r.shutdownErr != nil {
		fmt.Fprintf(w, "\nshutdown: %v\n", r.shutdownErr)
	}
	if done > 0 {
		fmt.Fprintln(w, "\nrequest latency, waiting for a connection included:")
		printHistogram(w, lat)
	}
}

func (r *result) printPool(w io.Writer, name, use string, s actorpool.Stats) {
	fmt.Fprintf(w, "pool %q (%s): %d max, %s created, %s destroyed; %s takes, %s of which queued, for %s in all\n",
		name, use, s.MaxObjects, fmtInt(uint64(s.Created)), fmtInt(uint64(s.Destroyed)),
		fmtInt(uint64(s.Acquires)), fmtInt(uint64(s.Waits)), fmtDur(s.WaitDuration))
}

// printHistogram draws the distribution of c in rows bounded by 1, 2, 5
// times powers of ten, from the first row with counts to the last.
func printHistogram(w io.Writer, c *counts) {
	var bounds []time.Duration
	for d := time.Microsecond; d < 10*time.Minute; d *= 10 {
		bounds = append(bounds, d, 2*d, 5*d)
	}
	type row struct {
		lo, hi time.Duration
		n      uint64
	}
	var rows []row
	var prev uint64
	lo := time.Duration(0)
	for _, hi := range bounds {
		n := c.countBelow(hi)
		rows = append(rows, row{lo, hi, n - prev})
		prev, lo = n, hi
		if n == c.total {
			break
		}
	}
	first := 0
	for first < len(rows) && rows[first].n == 0 {
		first++
	}
	rows = rows[first:]
	var most uint64
	for _, r := range rows {
		most = max(most, r.n)
	}
	const width = 40
	for _, r := range rows {
		label := fmt.Sprintf("%5s – %-5s", fmtBound(r.lo), fmtBound(r.hi))
		pct := 100 * float64(r.n) / float64(c.total)
		cells := strings.TrimRight(bar(float64(r.n)/float64(most), width), " ▏")
		fmt.Fprintf(w, "  %s %9s %5.1f%%  %s\n", label, fmtInt(r.n), pct, strings.TrimPrefix(cells, "▕"))
	}
}

// fmtBound writes a row's bound: 0, 5µs, 20ms, 2s.
func fmtBound(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d/time.Microsecond)
	case d < time.Second:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}
