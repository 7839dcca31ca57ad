package pgactor

import (
	"context"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/testenv"
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
