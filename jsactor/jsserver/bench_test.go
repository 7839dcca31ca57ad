package jsserver

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkPublishSync measures what fsyncing the store costs publishers,
// to choose DefaultSyncInterval: publishes one at a time, each waiting for
// its acknowledgement, and asynchronous publishes in windows of 256.
func BenchmarkPublishSync(b *testing.B) {
	for _, sc := range []struct {
		name string
		opts Options
	}{
		{"sync=default-2m", Options{SyncInterval: 2 * time.Minute}},
		{"sync=1s", Options{SyncInterval: time.Second}},
		{"sync=100ms", Options{SyncInterval: 100 * time.Millisecond}},
		{"sync=always", Options{SyncAlways: true}},
	} {
		b.Run(sc.name, func(b *testing.B) {
			opts := sc.opts
			opts.Dir = b.TempDir()
			s, err := Start(opts)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Shutdown()
			js := connect(b, s.ClientURL())
			payload := make([]byte, 128)

			b.Run("publish=ack", func(b *testing.B) {
				createStream(b, js, "BENCH", 1)
				defer js.DeleteStream(context.Background(), "BENCH")
				ctx := context.Background()
				for b.Loop() {
					if _, err := js.Publish(ctx, "BENCH.x", payload); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
			b.Run("publish=async256", func(b *testing.B) {
				createStream(b, js, "BENCH", 1)
				defer js.DeleteStream(context.Background(), "BENCH")
				const window = 256
				futures := make([]jetstream.PubAckFuture, 0, window)
				wait := func() {
					for _, f := range futures {
						select {
						case <-f.Ok():
						case err := <-f.Err():
							b.Fatal(err)
						}
					}
					futures = futures[:0]
				}
				for b.Loop() {
					f, err := js.PublishAsync("BENCH.x", payload)
					if err != nil {
						b.Fatal(err)
					}
					if futures = append(futures, f); len(futures) == window {
						wait()
					}
				}
				wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		})
	}
}
