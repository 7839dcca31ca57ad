package pgactor

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// BenchmarkSend measures concurrent sends outside transactions, with the
// notifier's window at zero (every send notifies), at its default, and at
// an hour (no send notifies), to show what notifying on every send costs.
//
//	go test -run '^$' -bench BenchmarkSend -benchtime 3s ./pgactor
func BenchmarkSend(b *testing.B) {
	dsn := testenv.Postgres(b)
	for _, w := range []struct {
		name   string
		window time.Duration
	}{{"notify=every", 0}, {"notify=window", notifyWindow}, {"notify=none", time.Hour}} {
		b.Run(w.name, func(b *testing.B) {
			p := newPool(b, dsn, 16)
			r := &rig{t: b, dsn: dsn, pool: p, schema: newSchema(b, p)}
			a := start(r, "bench", nil, Config[int]{Logger: quiet(b)})
			a.notifier.window = w.window
			b.SetParallelism(4) // 4 × GOMAXPROCS senders
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := a.Send(context.Background(), 1); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkBurnDown measures how fast workers work down a queue of
// pre-inserted no-op tasks: b.N tasks, sent in batches before the timer
// starts.
//
//	go test -run '^$' -bench BenchmarkBurnDown -benchtime 20000x ./pgactor
func BenchmarkBurnDown(b *testing.B) {
	dsn := testenv.Postgres(b)
	for _, workers := range []int{10, 50, 200} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			p := newPool(b, dsn, 20)
			r := &rig{t: b, dsn: dsn, pool: p, schema: newSchema(b, p)}
			sender := start(r, "burn", nil, Config[int]{Logger: quiet(b)})
			payloads := make([]int, 1000)
			for sent := 0; sent < b.N; sent += len(payloads) {
				if _, err := sender.SendBatch(context.Background(), payloads[:min(len(payloads), b.N-sent)]); err != nil {
					b.Fatal(err)
				}
			}
			var done atomic.Int64
			all := make(chan struct{})
			b.ResetTimer()
			start(r, "burn", func(ctx context.Context, task actor.Task[int]) error {
				if done.Add(1) == int64(b.N) {
					close(all)
				}
				return nil
			}, Config[int]{Workers: workers, Logger: quiet(b)})
			<-all
			eventually(b, time.Minute, "completions committed", func() bool {
				s, err := sender.Stats(context.Background())
				return err == nil && s.Completed == uint64(b.N)
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}

// BenchmarkHeartbeat measures the heartbeat of n leases held by one
// instance, one round trip each: the statement that names the most leases
// at once, and so shows what the fence costs per lease as n grows.
//
//	go test -run '^$' -bench BenchmarkHeartbeat ./pgactor
func BenchmarkHeartbeat(b *testing.B) {
	dsn := testenv.Postgres(b)
	for _, n := range []int{250, 1000, 4000} {
		b.Run(fmt.Sprintf("leases=%d", n), func(b *testing.B) {
			p := newPool(b, dsn, 2)
			r := &rig{t: b, dsn: dsn, pool: p, schema: newSchema(b, p)}
			a := start(r, "beat", nil, Config[int]{Logger: quiet(b)})
			leases := heldLeases(r, a, n)
			held := make(map[int64]bool, n)
			b.ResetTimer()
			for range b.N {
				batch := &pgx.Batch{}
				a.store.heartbeat(batch, leases, time.Minute, held)
				if err := a.store.runBatch(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if len(held) != n {
				b.Fatalf("the heartbeat found %d of %d leases held", len(held), n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/lease")
		})
	}
}
