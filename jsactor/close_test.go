package jsactor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/leakcheck"
	"github.com/nats-io/nats.go/jetstream"
)

// TestCloseGivesBack closes an actor while two handlers run: one returns
// when its context ends, one ignores it past Grace. Both tasks are given
// back uncharged, and run again elsewhere as attempt 1.
func TestCloseGivesBack(t *testing.T) {
	leakcheck.Check(t)
	srv := startServer(t)
	ctx := ctxT(t)
	started := make(chan string, 2)
	stubborn := make(chan struct{})
	a, err := New(ctx, connect(t, srv.ClientURL()), "closing", func(ctx context.Context, task actor.Task[string]) error {
		started <- task.Payload
		if task.Payload == "stubborn" {
			<-stubborn
			return nil
		}
		<-ctx.Done()
		if !errors.Is(context.Cause(ctx), ErrClosed) {
			t.Errorf("handler context ended with %v, want ErrClosed", context.Cause(ctx))
		}
		return ctx.Err()
	}, Config[string]{Workers: 2, Grace: 100 * time.Millisecond, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer close(stubborn)
	for _, p := range []string{"polite", "stubborn"} {
		if _, err := a.Send(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	<-started
	closeCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := a.Close(closeCtx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want an error wrapping the deadline", err)
	}

	var seen runs
	b, err := New(ctx, connect(t, srv.ClientURL()), "closing", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		return nil
	}, Config[string]{MaxAttempts: 1, FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, b)
	eventually(t, 10*time.Second, "both tasks run again", func() bool { return seen.count() == 2 })
	for _, r := range seen.list() {
		if r.Attempt != 1 {
			t.Errorf("given-back task ran as %+v, want attempt 1", r)
		}
	}
	eventually(t, 5*time.Second, "two completions, nothing lost or failed", func() bool {
		s, err := b.Stats(ctx)
		return err == nil && s.Completed == 2 && s.Lost == 0 && s.Failed == 0 && s.DeadLettered == 0
	})
}

// TestCloseWaitsForHandlers closes an actor whose handlers finish within
// Close's context: nothing is given back and Close returns nil.
func TestCloseWaitsForHandlers(t *testing.T) {
	leakcheck.Check(t)
	srv := startServer(t)
	ctx := ctxT(t)
	started := make(chan struct{}, 1)
	a, err := New(ctx, connect(t, srv.ClientURL()), "drain", func(ctx context.Context, task actor.Task[string]) error {
		started <- struct{}{}
		time.Sleep(100 * time.Millisecond)
		return nil
	}, Config[string]{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := a.Close(ctx); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if err := a.Close(ctx); err != nil {
		t.Errorf("second Close = %v", err)
	}
	// Close flushed the counters, an hour before the interval would have.
	s, err := ReadStats(ctx, connect(t, srv.ClientURL()), "", "drain")
	if err != nil || s.Completed != 1 || s.Accepted != 1 {
		t.Errorf("stats after Close = %+v, %v; want one accepted and completed", s, err)
	}
}

// TestSendAfterCloseCounted sends after Close, which the documentation
// allows: the tasks are counted as accepted, although Close has added the
// counters for the last time.
func TestSendAfterCloseCounted(t *testing.T) {
	leakcheck.Check(t)
	srv := startServer(t)
	ctx := ctxT(t)
	nc := connect(t, srv.ClientURL())
	a, err := New(ctx, nc, "afterclose", func(context.Context, actor.Task[int]) error { return nil }, Config[int]{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendBatch(ctx, []int{2, 3}); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStats(ctx, nc, "", "afterclose")
	if err != nil || s.Accepted != 3 || s.Queued != 3 {
		t.Errorf("stats = %+v, %v; want three accepted and queued", s, err)
	}
}

// TestCloseGraceOutlastsLease closes an actor whose handler takes longer
// than a Lease to return once its context ends, within a Grace longer
// than the Lease: the process renews the task's lease while it waits, and
// gives the task back uncharged — not lost, run again as a lost attempt.
func TestCloseGraceOutlastsLease(t *testing.T) {
	leakcheck.Check(t)
	srv := startServer(t)
	ctx := ctxT(t)
	started := make(chan struct{}, 1)
	a, err := New(ctx, connect(t, srv.ClientURL()), "slowstop", func(ctx context.Context, task actor.Task[string]) error {
		started <- struct{}{}
		<-ctx.Done()
		time.Sleep(1500 * time.Millisecond) // cleaning up
		return ctx.Err()
	}, Config[string]{Lease: time.Second, Grace: 3 * time.Second, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	<-started
	closeCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := a.Close(closeCtx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want an error wrapping the deadline: a task was given back", err)
	}

	var seen runs
	b, err := New(ctx, connect(t, srv.ClientURL()), "slowstop", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		return nil
	}, Config[string]{Lease: time.Second, MaxAttempts: 1, FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, b)
	eventually(t, 10*time.Second, "the task runs again", func() bool { return seen.count() == 1 })
	if r := seen.list()[0]; r.Attempt != 1 {
		t.Errorf("given-back task ran as %+v, want attempt 1", r)
	}
	eventually(t, 5*time.Second, "one completion, nothing lost", func() bool {
		s, err := b.Stats(ctx)
		return err == nil && s.Completed == 1 && s.Lost == 0 && s.Failed == 0
	})
}

// TestCloseDuringFlushCountsOnce closes actors just as their flusher adds
// a send's count to the counter stream: the count is added once, by the
// flusher or by Close, never by both.
func TestCloseDuringFlushCountsOnce(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	const rounds = 60
	for i := range rounds {
		a, err := New[int](ctx, nc, "flushclose", nil, Config[int]{FlushInterval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Send(ctx, i); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%12) * 100 * time.Microsecond) // across the next tick and its flush
		if err := a.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadStats(ctx, nc, "", "flushclose")
	if err != nil || s.Accepted != rounds || s.Queued != rounds {
		t.Errorf("stats = %+v, %v; want %d accepted and queued", s, err, rounds)
	}
}

// TestCloseGivesBackLostRunCounted has a task's worker lost, and gives
// the task's next delivery back as Close does one that a pull request
// brings as Close begins, or that waits for a worker when Close gives up:
// the lost run is charged to the task, and counted in Stats.Lost, as it is
// when the next delivery runs.
func TestCloseGivesBackLostRunCounted(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	cut := connect(t, srv.ClientURL())
	started := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	cfg := Config[string]{Lease: minLease, FlushInterval: 20 * time.Millisecond}
	lost, err := New(ctx, cut, "closelost", func(ctx context.Context, task actor.Task[string]) error {
		close(started)
		<-release
		return nil
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lost.Send(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	<-started
	cut.Close() // the worker is lost: its lease runs out

	closing, err := New[string](ctx, connect(t, srv.ClientURL()), "closelost", nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var msg jetstream.Msg
	var sent time.Duration
	eventually(t, 5*time.Second, "the task delivered again", func() bool {
		sent = closing.now()
		batch, err := closing.run.Fetch(1, jetstream.FetchMaxWait(100*time.Millisecond))
		if err != nil {
			return false
		}
		for m := range batch.Messages() {
			msg = m
		}
		return msg != nil
	})
	h, err := closing.hold(msg, sent)
	if err != nil || h.delivered != 2 {
		t.Fatalf("hold = %+v, %v; want the second delivery", h, err)
	}
	if !h.claim(heldGivenBack) {
		t.Fatal("claim failed")
	}
	closing.giveBack(h)
	closeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := closing.Close(closeCtx); err != nil {
		t.Fatal(err)
	}
	tasks, _, err := closing.Tasks(ctx, TaskFilter{})
	if err != nil || len(tasks) != 1 || tasks[0].State != TaskQueued || tasks[0].Lost != 1 || tasks[0].Attempts != 1 {
		t.Errorf("tasks = %+v, %v; want the task given back, its lost run charged", tasks, err)
	}
	if s, err := closing.Stats(ctx); err != nil || s.Lost != 1 {
		t.Errorf("stats = %+v, %v; want the lost run counted", s, err)
	}
}
