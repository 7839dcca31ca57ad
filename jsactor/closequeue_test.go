package jsactor

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/actor/tasktrace"
)

// stallTracer holds up the first attempt a worker takes up, before its
// handler starts, until release is closed: a worker delayed between
// taking a task from the queue and calling its handler.
type stallTracer struct {
	taken   chan struct{}
	release chan struct{}
	once    atomic.Bool
	ended   atomic.Pointer[tasktrace.AttemptResult]
}

func (s *stallTracer) StartSend(ctx context.Context, _ tasktrace.SendInfo) (context.Context, map[string]string, func([]uint64, error)) {
	return ctx, nil, func([]uint64, error) {}
}

func (s *stallTracer) StartAttempt(ctx context.Context, _ tasktrace.AttemptInfo, _ map[string]string) (context.Context, func(tasktrace.AttemptResult)) {
	if !s.once.Swap(true) {
		close(s.taken)
		<-s.release
	}
	return ctx, func(r tasktrace.AttemptResult) { s.ended.Store(&r) }
}

// TestCloseGivenBackNotStarted checks that a task Close gave back before
// its worker called the handler is not run by that worker after all: its
// handler would run, context canceled, on a task another process may be
// running already.
func TestCloseGivenBackNotStarted(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	tr := &stallTracer{taken: make(chan struct{}), release: make(chan struct{})}
	var started atomic.Int32
	a, err := New(ctx, connect(t, srv.ClientURL()), "queued", func(ctx context.Context, task actor.Task[int]) error {
		started.Add(1)
		return ctx.Err()
	}, Config[int]{Workers: 1, Grace: 20 * time.Millisecond, Tracer: tr, FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(ctx, 1); err != nil {
		t.Fatal(err)
	}
	<-tr.taken
	closeCtx, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.Close(closeCtx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close = %v, want the task given back", err)
	}
	close(tr.release)
	eventually(t, 10*time.Second, "the stalled attempt ended", func() bool { return tr.ended.Load() != nil })
	if n := started.Load(); n != 0 {
		t.Errorf("the handler of a task Close had given back started %d times", n)
	}
	if r := tr.ended.Load(); r.Outcome != tasktrace.OutcomeGivenBack {
		t.Errorf("the attempt ended as %v, want given back", r.Outcome)
	}

	var seen runs
	b, err := New(ctx, connect(t, srv.ClientURL()), "queued", func(ctx context.Context, task actor.Task[int]) error {
		seen.add(actor.Task[string]{ID: task.ID, Attempt: task.Attempt})
		return nil
	}, Config[int]{FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, b)
	eventually(t, 10*time.Second, "the task completed once elsewhere", func() bool {
		s, err := b.Stats(ctx)
		return err == nil && s.Completed == 1 && s.Lost == 0 && s.Failed == 0 && s.DeadLettered == 0 && seen.count() == 1
	})
	if r := seen.list()[0]; r.Attempt != 1 {
		t.Errorf("the given-back task ran as %+v, want attempt 1", r)
	}
}
