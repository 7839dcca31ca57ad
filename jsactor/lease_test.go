package jsactor

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
)

// TestLostRunFenced cuts a worker off from the server while its handler
// runs: its lease can no longer be proven, so its handler's context ends
// with ErrLeaseLost and its late result is dropped, while the task runs
// again elsewhere as attempt 2, and the lost run is counted.
func TestLostRunFenced(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	cut := connect(t, srv.ClientURL())
	started := make(chan struct{})
	release := make(chan struct{})
	causes := make(chan error, 1)
	lease := 600 * time.Millisecond
	// MaxAttempts 1: a lost run counts as an attempt, yet only MaxLost
	// dead-letters a task for being lost, so the task runs again.
	cfg := Config[string]{Lease: lease, FlushInterval: 20 * time.Millisecond}
	a, err := New(ctx, cut, "fenced", func(ctx context.Context, task actor.Task[string]) error {
		close(started)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		<-release // returns only after the task ran elsewhere
		return nil
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	id, err := a.Send(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	<-started
	cut.Close() // no more heartbeats from a

	var seen runs
	b, err := New(ctx, connect(t, srv.ClientURL()), "fenced", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		return nil
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, b)
	select {
	case cause := <-causes:
		if !errors.Is(cause, ErrLeaseLost) {
			t.Errorf("the cut-off handler's context ended with %v, want ErrLeaseLost", cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cut-off handler's context did not end")
	}
	eventually(t, 10*time.Second, "the task runs again", func() bool { return seen.count() == 1 })
	if r := seen.list()[0]; r.ID != id || r.Attempt != 2 {
		t.Errorf("second run = %+v, want task %d at attempt 2", r, id)
	}
	close(release)
	closeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = a.Close(closeCtx) // its counters cannot be flushed: its connection is gone
	eventually(t, 5*time.Second, "one completion and one lost run", func() bool {
		s, err := b.Stats(ctx)
		return err == nil && s.Completed == 1 && s.Lost == 1 && s.Running == 0
	})
}

// TestRenewalSkipsSettled checks that a heartbeat renews the leases of the
// running tasks although one task on its list was acknowledged by its
// worker meanwhile, as a task that completes just as the heartbeat starts
// is. Its in-progress acknowledgement fails at once ("already
// acknowledged"), which made the whole renewal fail with a warning, so a
// steady stream of short tasks could leave a long one unrenewed at every
// heartbeat.
func TestRenewalSkipsSettled(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var logs testenv.LockedBuffer
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	// A long lease: the background heartbeat (every Lease/3) does not
	// run while the test renews by hand.
	a, err := New(ctx, nc, "renew", func(ctx context.Context, task actor.Task[int]) error {
		started <- struct{}{}
		<-release
		return nil
	}, Config[int]{Workers: 2, Lease: time.Minute, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	defer close(release)
	closeT(t, a)
	for i := range 2 {
		if _, err := a.Send(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	<-started
	a.mu.Lock()
	var hs []*held
	for h := range a.held {
		hs = append(hs, h)
	}
	a.mu.Unlock()
	if len(hs) != 2 {
		t.Fatalf("%d tasks held, want 2", len(hs))
	}
	settled, running := hs[0], hs[1]
	if err := settled.msg.Ack(); err != nil { // as its worker would, before it forgets the task
		t.Fatal(err)
	}
	before := running.proven.Load()
	a.renewLeases()
	if after := running.proven.Load(); after <= before {
		t.Errorf("the running task's lease was not renewed (proven until %v, before %v)", time.Duration(after), time.Duration(before))
	}
	if logs.String() != "" {
		t.Errorf("the renewal logged: %s", logs.String())
	}
}

// TestShorterLeaseElsewhereKeepsAckWait starts an actor's workers with a
// long Lease, then another process of the actor — here one that only
// sends — with a shorter one. The server must not redeliver the workers'
// tasks sooner than their Lease, which they prove and renew on their own:
// a running task would run twice at once, neither handler told. (With
// workers on Lease 30s, a heartbeat every 10s, a sender on the default
// 5s had every task longer than 5s run again beside itself.)
func TestShorterLeaseElsewhereKeepsAckWait(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	var mu sync.Mutex
	running, most, runs := 0, 0, 0
	var lost []error
	handler := func(ctx context.Context, task actor.Task[string]) error {
		mu.Lock()
		running++
		runs++
		most = max(most, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		select {
		case <-time.After(2500 * time.Millisecond):
		case <-ctx.Done():
			mu.Lock()
			lost = append(lost, context.Cause(ctx))
			mu.Unlock()
			return ctx.Err()
		}
		return nil
	}
	cfg := Config[string]{Lease: 3 * time.Second, FlushInterval: 20 * time.Millisecond}
	for range 2 {
		w, err := New(ctx, connect(t, srv.ClientURL()), "acklease", handler, cfg)
		if err != nil {
			t.Fatal(err)
		}
		closeT(t, w)
	}
	sender, err := New[string](ctx, connect(t, srv.ClientURL()), "acklease", nil, Config[string]{Lease: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, sender)
	if _, err := sender.Send(ctx, "long"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the task completes", func() bool {
		s, err := sender.Stats(ctx)
		return err == nil && s.Completed >= 1 && s.Running == 0
	})
	mu.Lock()
	defer mu.Unlock()
	if most != 1 || runs != 1 || len(lost) != 0 {
		t.Errorf("%d runs, %d at once, leases lost %v: want one run", runs, most, lost)
	}
}
