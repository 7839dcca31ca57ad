package actor

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"
)

// handTasks is how many tasks the hand tests queue behind a held worker:
// enough that one worker's share of them is a hand.
const handTasks = 300

// lentNow reports whether a worker of a holds a hand.
func lentNow[T any](a *Actor[T]) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for w := range a.workers {
		if w.hand != nil {
			return true
		}
	}
	return false
}

// A handRig is an actor of one worker whose handler holds task 1 until open
// is called, so that the tasks sent after it queue and the worker, once
// freed, takes them in hands. Every task goes on to the test's handler.
type handRig struct {
	a    *Actor[int]
	held chan struct{} // closed once task 1 runs
	gate chan struct{} // closed by open
}

func newHandRig(t *testing.T, cfg Config[int], h Handler[int]) *handRig {
	r := &handRig{held: make(chan struct{}), gate: make(chan struct{})}
	cfg.Workers = 1
	r.a = newActor(t, "hand", func(ctx context.Context, task Task[int]) error {
		if task.Payload == 1 {
			close(r.held)
			<-r.gate
		}
		return h(ctx, task)
	}, cfg)
	return r
}

// send sends the tasks from to to; once task 1 is sent it waits for it to
// run, so that the others queue.
func (r *handRig) send(t *testing.T, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		if err := r.a.Send(t.Context(), i); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			<-r.held
		}
	}
}

func (r *handRig) open() { close(r.gate) }

// run sends handTasks tasks, lets them run and closes the actor.
func (r *handRig) run(t *testing.T) {
	t.Helper()
	r.send(t, 1, handTasks)
	r.open()
	if err := r.a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestHandKeepsOrderAndStats checks a worker running a hand: tasks run in
// the order sent, and every snapshot of Stats taken meanwhile counts the
// tasks before as completed, the task running as running, and the rest as
// queued.
func TestHandKeepsOrderAndStats(t *testing.T) {
	noLeaks(t)
	var (
		seen []int
		lent bool
		r    *handRig
	)
	r = newHandRig(t, Config[int]{}, func(_ context.Context, task Task[int]) error {
		lent = lent || lentNow(r.a)
		s := r.a.Stats()
		conserved(t, s)
		if s.Completed != uint64(len(seen)) || s.Running != 1 || s.Queued != handTasks-len(seen)-1 {
			t.Errorf("task %d: Completed %d, Running %d, Queued %d; want %d, 1, %d", task.Payload, s.Completed, s.Running, s.Queued, len(seen), handTasks-len(seen)-1)
		}
		if s.Queued > 0 && s.OldestQueued <= 0 {
			t.Errorf("task %d: OldestQueued %v with %d queued", task.Payload, s.OldestQueued, s.Queued)
		}
		seen = append(seen, task.Payload)
		return nil
	})
	r.run(t)
	if !lent {
		t.Error("no worker was lent a hand of the queue")
	}
	if !slices.IsSorted(seen) || len(seen) != handTasks {
		t.Errorf("ran %d tasks, in order: %v; want %d in order", len(seen), slices.IsSorted(seen), handTasks)
	}
	if s := r.a.Stats(); s.Completed != handTasks {
		t.Errorf("Completed = %d, want %d", s.Completed, handTasks)
	}
}

// TestHandStop checks Stop while a worker holds a hand: the tasks of the
// hand not yet started are dead-lettered as queued, the one running and
// ignoring its context is abandoned, and every task ends exactly once.
func TestHandStop(t *testing.T) {
	noLeaks(t)
	stuck, release := make(chan struct{}), make(chan struct{})
	sink := NewRingSink[int](handTasks)
	var (
		completed record[int]
		lent      bool
		r         *handRig
	)
	r = newHandRig(t, Config[int]{DeadLetters: sink, Grace: time.Millisecond}, func(_ context.Context, task Task[int]) error {
		if task.Payload == 10 {
			lent = lentNow(r.a)
			close(stuck)
			<-release // ignores its context, so Stop abandons it
			return nil
		}
		completed.add(task.Payload)
		return nil
	})
	r.send(t, 1, handTasks)
	r.open()
	<-stuck
	err := r.a.Stop()
	close(release)
	if !lent {
		t.Fatal("task 10 did not run from a hand")
	}
	var de *DrainError
	if !errors.As(err, &de) || de.Queued != handTasks-10 || de.InFlight != 1 || de.Abandoned != 1 {
		t.Fatalf("Stop = %v; want a DrainError with %d queued and 1 abandoned", err, handTasks-10)
	}
	s := r.a.Stats()
	conserved(t, s)
	if s.Completed != 9 || s.DeadLettered != handTasks-9 {
		t.Errorf("Completed %d, DeadLettered %d; want 9 and %d", s.Completed, s.DeadLettered, handTasks-9)
	}
	ended := append(completed.get(), payloads(t, sink)...)
	slices.Sort(ended)
	if want := seq(1, handTasks); !slices.Equal(ended, want) {
		t.Errorf("tasks ended (completed or dead-lettered): %v; want each of 1..%d once", ended, handTasks)
	}
}

// TestHandGoexit checks a handler that calls runtime.Goexit in the middle of
// a hand: the worker that takes its place runs the rest of the hand.
func TestHandGoexit(t *testing.T) {
	noLeaks(t)
	sink := NewRingSink[int](handTasks)
	var (
		completed record[int]
		lent      bool
		r         *handRig
	)
	r = newHandRig(t, Config[int]{DeadLetters: sink}, func(_ context.Context, task Task[int]) error {
		if task.Payload == 10 {
			lent = lentNow(r.a)
			runtime.Goexit()
		}
		completed.add(task.Payload)
		return nil
	})
	r.run(t)
	if !lent {
		t.Fatal("task 10 did not run from a hand")
	}
	s := r.a.Stats()
	conserved(t, s)
	if s.Completed != handTasks-1 || s.Panicked != 1 || !slices.Equal(payloads(t, sink), []int{10}) {
		t.Errorf("Completed %d, Panicked %d, dead letters %v; want %d, 1, [10]", s.Completed, s.Panicked, payloads(t, sink), handTasks-1)
	}
	if got := completed.get(); !slices.IsSorted(got) || len(got) != handTasks-1 {
		t.Errorf("completed %d tasks, in order: %v", len(got), slices.IsSorted(got))
	}
}

// TestHandAskAndRetry checks the tasks of a hand that answer an Ask, and
// that fail and are retried: Ask returns once its task has completed, as
// Stats shows, and the retried task completes on its second attempt. Tasks
// 2 to 21 make the first hand.
func TestHandAskAndRetry(t *testing.T) {
	noLeaks(t)
	var (
		attempts record[int]
		lent     bool
		r        *handRig
	)
	r = newHandRig(t, Config[int]{MaxAttempts: 2, Backoff: Backoff{Initial: time.Microsecond}}, func(_ context.Context, task Task[int]) error {
		if task.Payload == 20 {
			attempts.add(task.Attempt)
			if task.Attempt == 1 {
				lent = lentNow(r.a)
				return errors.New("first attempt fails")
			}
		}
		return nil
	})
	r.send(t, 1, 9)
	asked := make(chan error)
	go func() { asked <- r.a.Ask(t.Context(), 10) }()
	for r.a.Stats().Queued < 9 {
		runtime.Gosched() // until the Ask's task is queued behind the others
	}
	r.send(t, 11, 41)
	r.open()
	if err := <-asked; err != nil {
		t.Fatalf("Ask = %v", err)
	}
	if s := r.a.Stats(); s.Completed < 10 {
		t.Errorf("after Ask returned, Completed = %d; want its task and the 9 sent before it", s.Completed)
	}
	if err := r.a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !lent {
		t.Error("task 20 did not run from a hand")
	}
	if got := attempts.get(); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("task 20 ran attempts %v, want [1 2]", got)
	}
	s := r.a.Stats()
	conserved(t, s)
	if s.Completed != 41 || s.Retried != 1 {
		t.Errorf("Completed %d, Retried %d; want 41 and 1", s.Completed, s.Retried)
	}
}

// seq returns from, from+1, ..., to.
func seq(from, to int) []int {
	s := make([]int, 0, to-from+1)
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}
