package jsactor

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// BenchmarkBurnDown measures how fast one process's workers complete tasks
// already stored, on an embedded single node: the figure is tasks/s. The
// cells that compare jsactor with pgactor and River live in the bench
// module (bench/queues).
func BenchmarkBurnDown(b *testing.B) {
	for _, workers := range []int{10, 100} {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			const n = 20000
			srv := startServer(b)
			ctx := context.Background()
			nc := connect(b, srv.ClientURL())
			var done atomic.Int64
			finished := make(chan struct{})
			var total int64
			for i := 0; i < b.N; i++ {
				name := "burn" + strconv.Itoa(i)
				sender, err := New[int](ctx, nc, name, nil, Config[int]{})
				if err != nil {
					b.Fatal(err)
				}
				payloads := make([]int, 1000)
				for range n / len(payloads) {
					if _, err := sender.SendBatch(ctx, payloads); err != nil {
						b.Fatal(err)
					}
				}
				_ = sender.Close(ctx)
				done.Store(0)
				b.StartTimer()
				start := time.Now()
				a, err := New(ctx, nc, name, func(ctx context.Context, task actor.Task[int]) error {
					if done.Add(1) == n {
						finished <- struct{}{}
					}
					return nil
				}, Config[int]{Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				<-finished
				elapsed := time.Since(start)
				b.StopTimer()
				_ = a.Close(ctx)
				total += n
				b.ReportMetric(float64(n)/elapsed.Seconds(), "tasks/s")
			}
		})
	}
}
