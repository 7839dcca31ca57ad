package actor

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func nop(context.Context, Task[int]) error { return nil }

// BenchmarkSend measures the cost of Send to a bounded and an unbounded
// mailbox, from one producer and from GOMAXPROCS producers, with GOMAXPROCS
// workers running a no-op handler. It times submission only; see
// BenchmarkSendAndDrain for submission and completion.
func BenchmarkSend(b *testing.B) {
	for _, mb := range []struct {
		name     string
		capacity int
	}{{"bounded", 1024}, {"unbounded", 0}} {
		b.Run(mb.name+"/producers=1", func(b *testing.B) {
			a := benchActor(b, mb.capacity)
			ctx := context.Background()
			for b.Loop() {
				a.Send(ctx, 1)
			}
		})
		b.Run(mb.name+"/producers=GOMAXPROCS", func(b *testing.B) {
			a := benchActor(b, mb.capacity)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					a.Send(ctx, 1)
				}
			})
			b.StopTimer()
		})
	}
}

// BenchmarkSendAndDrain measures the whole cost of a task: sent from
// GOMAXPROCS producers, run by GOMAXPROCS workers, and Close waiting for the
// last one.
func BenchmarkSendAndDrain(b *testing.B) {
	for _, mb := range []struct {
		name     string
		capacity int
	}{{"bounded", 1024}, {"unbounded", 0}} {
		b.Run(mb.name, func(b *testing.B) {
			a := benchActor(b, mb.capacity)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					a.Send(ctx, 1)
				}
			})
			if err := a.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if s := a.Stats(); s.Completed != s.Submitted {
				b.Fatalf("completed %d of %d", s.Completed, s.Submitted)
			}
		})
	}
}

// BenchmarkAsk measures a round trip: send, run, answer.
func BenchmarkAsk(b *testing.B) {
	a := benchActor(b, 1024)
	ctx := context.Background()
	for b.Loop() {
		a.Ask(ctx, 1)
	}
}

func benchActor(b *testing.B, capacity int) *Actor[int] {
	b.Helper()
	a, err := New("bench", nop, Config[int]{Workers: runtime.GOMAXPROCS(0), Capacity: capacity, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Stop() })
	return a
}

// TestSendDoesNotAllocate guards the hot path: Send to a bounded mailbox
// with room, with or without a type, and the worker picking the task up.
func TestSendDoesNotAllocate(t *testing.T) {
	noLeaks(t)
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	a := newActor(t, "allocs", nop, Config[int]{Workers: 2, Capacity: 1 << 16, Logger: quiet})
	ctx := context.Background()
	typed := WithType("typed")
	for name, send := range map[string]func(){
		"Send":              func() { a.Send(ctx, 1) },
		"Send WithType":     func() { a.Send(ctx, 1, WithType("typed")) },
		"Send shared type":  func() { a.Send(ctx, 1, typed) },
		"TrySend":           func() { a.TrySend(1) },
		"Send and wait run": func() { a.Send(ctx, 1); waitIdle(a) },
	} {
		if allocs := testing.AllocsPerRun(1000, send); allocs != 0 {
			t.Errorf("%s allocates %v times per task", name, allocs)
		}
	}
}

// waitIdle spins until a has no task left.
func waitIdle(a *Actor[int]) {
	for {
		if s := a.Stats(); s.Queued == 0 && s.Running == 0 {
			return
		}
		runtime.Gosched()
	}
}
