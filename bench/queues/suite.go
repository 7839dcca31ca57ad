package queues

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

// Schema returns the schema a queue of kind k gets in this process: one per
// library, made afresh for every cell.
func Schema(k Kind) string {
	return fmt.Sprintf("bench_queues_%s_%d", k.Queue, os.Getpid())
}

// A Recovery variant is a queue and the rescue setting it is killed under.
type RecoveryVariant struct {
	Name   string
	Kind   Kind
	Rescue time.Duration
}

// RecoveryVariants returns the recovery cells s runs: pgactor at its
// default lease, and, if s.RecoveryRiver, River at its default rescue
// (an hour) and at 5 s, the same as pgactor's default lease.
func RecoveryVariants(s Scale) []RecoveryVariant {
	vs := []RecoveryVariant{{"pgactor, lease 5s (default)", PGActor, 0}}
	if s.RecoveryRiver {
		vs = append(vs,
			RecoveryVariant{"river, rescue after 1h (default)", River, 0},
			RecoveryVariant{"river, rescue after 5s", River, 5 * time.Second})
	}
	return vs
}

// Suite runs every cell of s count times against the PostgreSQL at dsn,
// says what it does on log, and writes markdown tables of the medians to
// out: each queue at its best worker count, with pgactor's ratio to River.
func Suite(ctx context.Context, dsn string, s Scale, count int, log, out io.Writer) error {
	withQueue := func(k Kind, rescue time.Duration, fn func(Queue) error) error {
		o := Options{DSN: dsn, Schema: Schema(k), Rescue: rescue}
		q, err := Open(ctx, k, o)
		if err != nil {
			return err
		}
		err = fn(q)
		if cerr := q.Close(context.WithoutCancel(ctx)); err == nil {
			err = cerr
		}
		return err
	}
	kinds := []Kind{PGActor, River}
	type key struct {
		kind    string
		workers int
	}
	burn := map[key][]float64{}
	sus := map[key][]SustainedResult{}
	lat := map[string][]LatencyResult{}
	rec := map[string][]RecoveryResult{}
	for i := range count {
		fmt.Fprintf(log, "queues: run %d of %d\n", i+1, count)
		for _, k := range kinds {
			for _, w := range s.Workers {
				err := withQueue(k, 0, func(q Queue) error {
					r, err := BurnDown(ctx, q, s.BurnDown, w)
					burn[key{k.Name, w}] = append(burn[key{k.Name, w}], r)
					fmt.Fprintf(log, "  burn-down %s workers=%d: %.0f tasks/s\n", k.Name, w, r)
					return err
				})
				if err != nil {
					return fmt.Errorf("burn-down, %s, %d workers: %w", k.Name, w, err)
				}
			}
		}
		for _, k := range kinds {
			for _, w := range s.Workers {
				err := withQueue(k, 0, func(q Queue) error {
					r, err := Sustained(ctx, q, s.Sustained, s.Backlog, w)
					sus[key{k.Name, w}] = append(sus[key{k.Name, w}], r)
					fmt.Fprintf(log, "  sustained %s workers=%d: %.0f tasks/s, %.1f → %.1f MB\n", k.Name, w, r.PerSec, mb(r.StartBytes), mb(r.EndBytes))
					return err
				})
				if err != nil {
					return fmt.Errorf("sustained, %s, %d workers: %w", k.Name, w, err)
				}
			}
		}
		for _, k := range []Kind{PGActor, River, RiverDefaults} {
			err := withQueue(k, 0, func(q Queue) error {
				r, err := Latency(ctx, q, s.Rate, s.LatencyFor, s.LatencyWorkers)
				lat[k.Name] = append(lat[k.Name], r)
				fmt.Fprintf(log, "  latency %s: p50 %v, p99 %v\n", k.Name, r.P50, r.P99)
				return err
			})
			if err != nil {
				return fmt.Errorf("latency, %s: %w", k.Name, err)
			}
		}
		for _, v := range RecoveryVariants(s) {
			err := withQueue(v.Kind, v.Rescue, func(q Queue) error {
				r, err := Recovery(ctx, q, v.Kind, s.RecoveryCap)
				rec[v.Name] = append(rec[v.Name], r)
				fmt.Fprintf(log, "  recovery %s: %v (recovered: %v)\n", v.Name, r.After, r.Recovered)
				return err
			})
			if err != nil {
				return fmt.Errorf("recovery, %s: %w", v.Name, err)
			}
		}
	}

	best := func(kind string, of func(w int) float64) (float64, int) {
		var v float64
		var at int
		for _, w := range s.Workers {
			if x := of(w); x > v {
				v, at = x, w
			}
		}
		return v, at
	}
	fmt.Fprintf(out, "### Throughput, tasks per second (medians of %d; each queue at its best worker count)\n\n", count)
	fmt.Fprintln(out, "| mode | pgactor | River | pgactor / River |")
	fmt.Fprintln(out, "|---|---|---|---|")
	for _, mode := range []string{"burn-down", "sustained"} {
		of := func(kind string) func(int) float64 {
			return func(w int) float64 {
				if mode == "burn-down" {
					return median(burn[key{kind, w}])
				}
				var xs []float64
				for _, r := range sus[key{kind, w}] {
					xs = append(xs, r.PerSec)
				}
				return median(xs)
			}
		}
		p, pw := best(PGActor.Name, of(PGActor.Name))
		r, rw := best(River.Name, of(River.Name))
		fmt.Fprintf(out, "| %s | %.0f (%d workers) | %.0f (%d workers) | %.2f× |\n", mode, p, pw, r, rw, p/r)
	}
	fmt.Fprintf(out, "\n### Tables' size in the sustained mode, MB at start → end (median; %v)\n\n", s.Sustained)
	fmt.Fprintln(out, "| workers | pgactor | River |")
	fmt.Fprintln(out, "|---|---|---|")
	for _, w := range s.Workers {
		row := fmt.Sprintf("| %d |", w)
		for _, k := range kinds {
			var a, b []float64
			for _, r := range sus[key{k.Name, w}] {
				a, b = append(a, mb(r.StartBytes)), append(b, mb(r.EndBytes))
			}
			row += fmt.Sprintf(" %.1f → %.1f |", median(a), median(b))
		}
		fmt.Fprintln(out, row)
	}
	fmt.Fprintf(out, "\n### Send-to-start latency at %d tasks/s, ms (medians of %d)\n\n", s.Rate, count)
	fmt.Fprintln(out, "| queue | p50 | p99 |")
	fmt.Fprintln(out, "|---|---|---|")
	for _, k := range []Kind{PGActor, River, RiverDefaults} {
		var p50, p99 []float64
		for _, r := range lat[k.Name] {
			p50, p99 = append(p50, ms(r.P50)), append(p99, ms(r.P99))
		}
		fmt.Fprintf(out, "| %s | %.2f | %.2f |\n", k.Name, median(p50), median(p99))
	}
	fmt.Fprintf(out, "\n### Recovery: from SIGKILL to the task running again, s (medians of %d)\n\n", count)
	fmt.Fprintln(out, "| queue | recovery | recovered |")
	fmt.Fprintln(out, "|---|---|---|")
	for _, v := range RecoveryVariants(s) {
		var xs []float64
		n := 0
		for _, r := range rec[v.Name] {
			xs = append(xs, r.After.Seconds())
			if r.Recovered {
				n++
			}
		}
		after := fmt.Sprintf("%.1f", median(xs))
		if n == 0 {
			after = fmt.Sprintf("> %.0f (not within the cap)", s.RecoveryCap.Seconds())
		}
		fmt.Fprintf(out, "| %s | %s | %d of %d |\n", v.Name, after, n, len(rec[v.Name]))
	}
	return nil
}

func mb(b int64) float64         { return float64(b) / 1e6 }
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// median returns the median of xs, 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
