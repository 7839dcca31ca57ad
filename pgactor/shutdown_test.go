package pgactor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// TestShutdownMoves closes three actors — a send-only one, one whose
// workers are idle, and one whose handler outlives Close's context and
// grace — and checks that together they made every move of phaseMoves,
// and none it does not list (which would have panicked).
func TestShutdownMoves(t *testing.T) {
	r := newRig(t)
	var made [phases][phases]int
	closed := func(a *Actor[int]) {
		t.Helper()
		if got := a.shut.phase(); got != phaseClosed {
			t.Errorf("%s: phase %v after Close, want closed", a.name, got)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		for from := range phases {
			for to := range phases {
				made[from][to] += a.shut.moves[from][to]
			}
		}
	}

	sendOnly := start(r, "send_only", nil, Config[int]{Logger: quiet(t)})
	if err := sendOnly.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	closed(sendOnly)

	idle := start(r, "idle", func(context.Context, actor.Task[int]) error { return nil }, Config[int]{Workers: 2, Logger: quiet(t)})
	if err := idle.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	closed(idle)

	started, release := make(chan struct{}), make(chan struct{})
	stubborn := start(r, "stubborn", func(context.Context, actor.Task[int]) error {
		close(started)
		<-release // ignores its context, past the grace
		return nil
	}, Config[int]{Grace: 10 * time.Millisecond, Logger: quiet(t)})
	if _, err := stubborn.Send(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	<-started
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := stubborn.Close(ctx); err != nil {
		t.Fatal(err)
	}
	close(release)
	closed(stubborn)
	stubborn.workerWG.Wait()

	for from := range phases {
		for to := range phases {
			listed := phaseMoves[from]&(1<<to) != 0
			if n := made[from][to]; listed && n == 0 {
				t.Errorf("no actor moved %v → %v, which the table lists", from, to)
			} else if !listed && n > 0 {
				t.Errorf("an actor moved %v → %v, which the table does not list", from, to)
			}
		}
	}
}

// TestPhaseAnnounced checks that each channel of a shutdown is closed as
// the actor enters the phase it is named for, and not before.
func TestPhaseAnnounced(t *testing.T) {
	var s shutdown
	s.init()
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	for _, to := range []phase{phaseRunning, phaseStopping, phaseCanceling, phaseDraining, phaseClosed} {
		if to != phaseRunning {
			s.moveLocked(to)
		}
		if got, want := closed(s.stopping), to >= phaseStopping; got != want {
			t.Errorf("in phase %v, stopping closed: %v", to, got)
		}
		if got, want := s.stoppingCtx.Err() != nil, to >= phaseStopping; got != want {
			t.Errorf("in phase %v, stoppingCtx ended: %v", to, got)
		}
		if got, want := closed(s.draining), to >= phaseDraining; got != want {
			t.Errorf("in phase %v, draining closed: %v", to, got)
		}
	}
}

// TestPhaseMoveNotListedPanics checks that a move the table does not list
// panics and leaves the phase as it was.
func TestPhaseMoveNotListedPanics(t *testing.T) {
	var s shutdown
	s.init()
	s.moveLocked(phaseStopping)
	defer func() {
		v := recover()
		if err, ok := v.(error); !ok || !strings.Contains(err.Error(), "cannot move from stopping to running") {
			t.Errorf("moveLocked(stopping → running) panicked with %v, want a refusal", v)
		}
		if s.phase() != phaseStopping {
			t.Errorf("a refused move changed the phase to %v", s.phase())
		}
	}()
	s.moveLocked(phaseRunning)
}

// TestCloseGivesBack checks that Close lets a handler that ends in time
// complete, and gives back, uncharged, the task of one that does not.
func TestCloseGivesBack(t *testing.T) {
	r := newRig(t)
	started := make(chan int, 2)
	a, err := New(t.Context(), r.pool, "closing", func(ctx context.Context, task actor.Task[int]) error {
		started <- task.Payload
		if task.Payload == 1 {
			time.Sleep(100 * time.Millisecond)
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}, Config[int]{Schema: r.schema, Workers: 2, OnError: func(*actor.TaskError) { t.Error("a task failed") }})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 2} {
		if _, err := a.Send(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	<-started
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStats(t.Context(), r.pool, r.schema, "closing")
	if err != nil {
		t.Fatal(err)
	}
	checkIdentity(t, s)
	if s.Completed != 1 || s.Queued != 1 || s.DeadLettered != 0 || s.Running != 0 || s.Failed != 0 {
		t.Errorf("after Close: %+v, want one completed and one queued again", s)
	}
	var attempt int
	var owner *string
	if err := r.pool.QueryRow(t.Context(), expand(r.schema, `SELECT attempt, owner FROM {s}.tasks`)).Scan(&attempt, &owner); err != nil {
		t.Fatal(err)
	}
	if attempt != 0 || owner != nil {
		t.Errorf("the given-back task: attempt %d, owner %v; want 0, none", attempt, owner)
	}
	reran := make(chan actor.Task[int], 1)
	start(r, "closing", func(ctx context.Context, task actor.Task[int]) error {
		reran <- task
		return nil
	}, Config[int]{PollInterval: time.Hour})
	if task := within(t, reran, 10*time.Second, "the given-back task did not run at once"); task.Payload != 2 || task.Attempt != 1 {
		t.Errorf("ran again as %+v, want payload 2, attempt 1", task)
	}
}

// TestCloseAbandons checks that Close returns after the grace period when
// a handler ignores its context, with the task given back, and that the
// handler's late success is not recorded.
func TestCloseAbandons(t *testing.T) {
	r := newRig(t)
	started := make(chan struct{})
	release := make(chan struct{})
	returned := make(chan struct{})
	a, err := New(t.Context(), r.pool, "stubborn", func(ctx context.Context, task actor.Task[int]) error {
		defer close(returned)
		close(started)
		<-release
		return nil
	}, Config[int]{Schema: r.schema, Grace: 50 * time.Millisecond, Logger: quiet(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	<-started
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-returned
	time.Sleep(50 * time.Millisecond) // the late completion, were it recorded
	s, err := ReadStats(t.Context(), r.pool, r.schema, "stubborn")
	if err != nil {
		t.Fatal(err)
	}
	if s.Queued != 1 || s.Completed != 0 {
		t.Errorf("after Close abandoned the handler: %+v, want the task queued again", s)
	}
}

// TestCloseCancelsLateFetch checks that a task whose fetch was in flight
// when Close's context ended and Close canceled the handlers has its
// handler canceled too, and is given back, rather than run uncanceled
// through the grace period.
func TestCloseCancelsLateFetch(t *testing.T) {
	r := newRig(t)
	p, proxy := r.poolThroughProxy()
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	a, err := New(t.Context(), p, "latefetch", func(ctx context.Context, task actor.Task[int]) error {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-release:
			return errors.New("released by the test: the handler's context was not canceled")
		}
	}, Config[int]{Schema: r.schema, Workers: 1, Grace: time.Hour, Lease: time.Minute, PollInterval: 20 * time.Millisecond, DisableListen: true, Logger: quiet(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	sender := start(r, "latefetch", nil, Config[int]{})
	eventually(t, 10*time.Second, "the worker idle", func() bool { return stats(t, a).Idle == 1 })
	proxy.Stall()
	if _, err := sender.Send(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	// A poll's fetch takes the idle worker out of idle while it runs,
	// stalled.
	eventually(t, 10*time.Second, "a fetch in flight", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.idle == 0 && a.busy == 0
	})
	done, cancel := context.WithCancel(t.Context())
	cancel()
	closed := make(chan error, 1)
	go func() { closed <- a.Close(done) }()
	eventually(t, 10*time.Second, "Close canceling", func() bool { return a.shut.phase() >= phaseCanceling })
	time.Sleep(20 * time.Millisecond) // for Close to cancel the handlers it has
	proxy.Resume()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Error("Close still waits, for a handler it did not cancel")
		close(release)
		<-closed
	}
	s := stats(t, sender)
	if s.Queued != 1 || s.Failed != 0 || s.DeadLettered != 0 {
		t.Errorf("after Close: %+v, want the task given back", s)
	}
}
