package actorpool

import (
	"context"
	"fmt"
	"testing"
)

func benchPool(b *testing.B, cfg Config) *Pool[*int] {
	b.Helper()
	cfg.Logger = discardLogger()
	p, err := New(FactoryFuncs[*int]{CreateFunc: func(context.Context) (*int, error) { return new(int), nil }}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// BenchmarkAcquireRelease is the uncontended cycle: one goroutine taking
// and giving back an idle object.
func BenchmarkAcquireRelease(b *testing.B) {
	for _, fifo := range []bool{false, true} {
		b.Run(fmt.Sprintf("FIFO=%v", fifo), func(b *testing.B) {
			p := benchPool(b, Config{MaxObjects: 4, FIFO: fifo})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				l, err := p.Acquire(ctx)
				if err != nil {
					b.Fatal(err)
				}
				l.Release()
			}
		})
	}
}

func BenchmarkTryAcquireRelease(b *testing.B) {
	p := benchPool(b, Config{MaxObjects: 4})
	l, _ := p.Acquire(context.Background())
	l.Release()
	b.ReportAllocs()
	for b.Loop() {
		l, err := p.TryAcquire()
		if err != nil {
			b.Fatal(err)
		}
		l.Release()
	}
}

func BenchmarkWith(b *testing.B) {
	p := benchPool(b, Config{MaxObjects: 4})
	ctx := context.Background()
	fn := func(context.Context, *int) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		p.With(ctx, fn)
	}
}

// BenchmarkParallel is every goroutine taking and giving back as fast as it
// can, with as many objects as goroutines (no waiting) and with fewer
// (waiting and hand-offs).
func BenchmarkParallel(b *testing.B) {
	for _, size := range []int{64, 2} {
		b.Run(fmt.Sprintf("objects=%d", size), func(b *testing.B) {
			p := benchPool(b, Config{MaxObjects: size})
			b.ReportAllocs()
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					l, err := p.Acquire(ctx)
					if err != nil {
						b.Error(err)
						return
					}
					l.Release()
				}
			})
		})
	}
}
