package bench_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/actorpool/actorpool/bench/queues"
	"github.com/actorpool/actorpool/bench/servers"
)

// TestMain lets the recovery and processes cells of BenchmarkQueues re-run
// this binary as their worker processes.
func TestMain(m *testing.M) {
	queues.MaybeChild()
	os.Exit(m.Run())
}

// queuesFullVar, set to any value, runs BenchmarkQueues at the issue's
// scale; unset, it runs at queues.Quick, which CI runs in seconds.
const queuesFullVar = "ACTORPOOL_BENCH_QUEUES"

// BenchmarkQueues compares pgactor with River v0.51.2 on the PostgreSQL
// server ACTORPOOL_POSTGRES names, each in a schema of its own made afresh
// for every cell, and jsactor on NATS JetStream servers embedded in the
// benchmark's process, started afresh with a new store for every cell: a
// single node fsyncing every second (queue=jetstream) and every write
// (queue=jetstream-syncalways), and a three-node cluster with streams
// replicated three times (queue=jetstream-r3). pgactor also runs with 4,
// 8 and 16 rounds in flight (queue=pgactor-rounds4, pgactor-rounds8,
// pgactor-rounds16). The
// cells: burn-down throughput of pre-inserted no-op tasks, sustained
// throughput with a producer inserting while workers run (and the tables'
// or streams' size at the start, the end and the peak), producers sending
// one task per call (throughput, backlog left, peak size), burn-down by
// worker processes sharing the queue (pgactor and River), send-to-start
// latency at a rate below saturation, and the time until the task of a
// worker process killed with SIGKILL runs again. Every cell runs its
// workload once per iteration; run it with -benchtime 1x. Without
// PostgreSQL, the pgactor and River cells skip and the JetStream ones run.
// Set ACTORPOOL_BENCH_QUEUES=1 for the scale (100,000 tasks, 100
// to 2,000 workers, 1 and 4 processes, River's recovery at its default
// rescue and at ours); three counts took 43 minutes for issue 22, before
// the producers and processes cells and the rounds kinds:
//
//	ACTORPOOL_BENCH_QUEUES=1 go test -run '^$' -bench BenchmarkQueues -benchtime 1x -count 3 -timeout 2h .
func BenchmarkQueues(b *testing.B) {
	scale := queues.Quick
	if os.Getenv(queuesFullVar) != "" {
		scale = queues.Full
	}
	kinds := slices.Concat([]queues.Kind{queues.PGActor}, queues.PGActorRounds, []queues.Kind{queues.River}, queues.JetStreamKinds)
	open := func(b *testing.B, k queues.Kind, rescue time.Duration) queues.Queue {
		b.Helper()
		o := queues.Options{Schema: queues.Schema(k), Rescue: rescue}
		if k.Queue != queues.JetStream.Queue {
			o.DSN = servers.Need(b, servers.Postgres)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		q, err := queues.Open(ctx, k, o)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := q.Close(ctx); err != nil {
				b.Error(err)
			}
		})
		return q
	}
	timeout := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 10*time.Minute)
	}
	hideNsOp := func(b *testing.B) { b.ReportMetric(0, "ns/op") }

	b.Run("cell=burndown", func(b *testing.B) {
		for _, k := range kinds {
			for _, w := range scale.Workers {
				b.Run(fmt.Sprintf("queue=%s/workers=%d", k.Name, w), func(b *testing.B) {
					var sum float64
					for range b.N {
						q := open(b, k, 0)
						ctx, cancel := timeout()
						perSec, err := queues.BurnDown(ctx, q, scale.BurnDown, w)
						cancel()
						if err != nil {
							b.Fatal(err)
						}
						sum += perSec
					}
					hideNsOp(b)
					b.ReportMetric(sum/float64(b.N), "tasks/s")
				})
			}
		}
	})
	b.Run("cell=sustained", func(b *testing.B) {
		for _, k := range kinds {
			for _, w := range scale.Workers {
				b.Run(fmt.Sprintf("queue=%s/workers=%d", k.Name, w), func(b *testing.B) {
					var sum queues.SustainedResult
					for range b.N {
						q := open(b, k, 0)
						ctx, cancel := timeout()
						r, err := queues.Sustained(ctx, q, scale.Sustained, scale.Backlog, w)
						cancel()
						if err != nil {
							b.Fatal(err)
						}
						sum.PerSec += r.PerSec
						sum.StartBytes += r.StartBytes
						sum.EndBytes += r.EndBytes
						sum.PeakBytes += r.PeakBytes
					}
					n := float64(b.N)
					hideNsOp(b)
					b.ReportMetric(sum.PerSec/n, "tasks/s")
					b.ReportMetric(float64(sum.StartBytes)/n/1e6, "start-MB")
					b.ReportMetric(float64(sum.EndBytes)/n/1e6, "end-MB")
					b.ReportMetric(float64(sum.PeakBytes)/n/1e6, "peak-MB")
				})
			}
		}
	})
	b.Run("cell=producers", func(b *testing.B) {
		for _, k := range kinds {
			for _, w := range scale.Workers {
				b.Run(fmt.Sprintf("queue=%s/producers=%d/workers=%d", k.Name, scale.Producers, w), func(b *testing.B) {
					var sent, worked, backlog, peak float64
					for range b.N {
						q := open(b, k, 0)
						ctx, cancel := timeout()
						r, err := queues.Producers(ctx, q, scale.Producers, scale.ProducersFor, w)
						cancel()
						if err != nil {
							b.Fatal(err)
						}
						sent += r.SentPerSec
						worked += r.WorkedPerSec
						backlog += r.BacklogSeconds()
						peak += float64(r.PeakBytes)
					}
					n := float64(b.N)
					hideNsOp(b)
					b.ReportMetric(sent/n, "sent/s")
					b.ReportMetric(worked/n, "tasks/s")
					b.ReportMetric(backlog/n, "backlog-s")
					b.ReportMetric(peak/n/1e6, "peak-MB")
				})
			}
		}
	})
	b.Run("cell=processes", func(b *testing.B) {
		for _, k := range slices.Concat([]queues.Kind{queues.PGActor}, queues.PGActorRounds, []queues.Kind{queues.River}) {
			for _, procs := range scale.Processes {
				b.Run(fmt.Sprintf("queue=%s/processes=%d/workers=%d", k.Name, procs, scale.ProcessWorkers), func(b *testing.B) {
					var sum float64
					for range b.N {
						q := open(b, k, 0)
						ctx, cancel := timeout()
						perSec, err := queues.Processes(ctx, q, k, scale.BurnDown, procs, scale.ProcessWorkers)
						cancel()
						if err != nil {
							b.Fatal(err)
						}
						sum += perSec
					}
					hideNsOp(b)
					b.ReportMetric(sum/float64(b.N), "tasks/s")
				})
			}
		}
	})
	b.Run("cell=latency", func(b *testing.B) {
		for _, k := range append([]queues.Kind{queues.PGActor, queues.River, queues.RiverDefaults}, queues.JetStreamKinds...) {
			b.Run(fmt.Sprintf("queue=%s/rate=%d", k.Name, scale.Rate), func(b *testing.B) {
				var p50, p99 time.Duration
				for range b.N {
					q := open(b, k, 0)
					ctx, cancel := timeout()
					r, err := queues.Latency(ctx, q, scale.Rate, scale.LatencyFor, scale.LatencyWorkers)
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					p50 += r.P50
					p99 += r.P99
				}
				n := float64(b.N)
				hideNsOp(b)
				b.ReportMetric(float64(p50.Microseconds())/n/1e3, "p50-ms")
				b.ReportMetric(float64(p99.Microseconds())/n/1e3, "p99-ms")
			})
		}
	})
	b.Run("cell=recovery", func(b *testing.B) {
		type variant struct {
			name   string
			k      queues.Kind
			rescue time.Duration
		}
		vs := []variant{{"queue=pgactor/rescue=default", queues.PGActor, 0}}
		if scale.RecoveryRiver {
			vs = append(vs,
				variant{"queue=river/rescue=default", queues.River, 0},
				variant{"queue=river/rescue=5s", queues.River, 5 * time.Second})
		}
		for _, k := range queues.JetStreamKinds {
			// jsactor's default lease is 5 s, as pgactor's.
			vs = append(vs, variant{"queue=" + k.Name + "/rescue=default", k, 0})
		}
		for _, v := range vs {
			b.Run(v.name, func(b *testing.B) {
				var sum time.Duration
				recovered := 0
				for range b.N {
					q := open(b, v.k, v.rescue)
					ctx, cancel := timeout()
					r, err := queues.Recovery(ctx, q, v.k, scale.RecoveryCap)
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					if r.Recovered {
						recovered++
					} else {
						b.Logf("the killed worker's task did not run again within %v", scale.RecoveryCap)
					}
					sum += r.After
				}
				n := float64(b.N)
				hideNsOp(b)
				b.ReportMetric(sum.Seconds()/n, "recovery-s")
				b.ReportMetric(float64(recovered)/n, "recovered")
			})
		}
	})
}
