package actor

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"testing/synctest"
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

// behindSlowTask holds every worker of a new actor made with cfg on a task
// of its own, queues a slow task and then quick ones behind it, and lets the
// workers go: the first to reach the mailbox takes the slow task first, and
// with it, if it takes a run, quick ones that must not wait for it. Once
// nothing else can move, every quick task must have completed while the slow
// one runs, and Close, whose deadline the slow one outlasts, must
// dead-letter the slow task alone.
func behindSlowTask(t *testing.T, cfg Config[int], workers int) {
	const quick = 200
	synctest.Test(t, func(t *testing.T) {
		sink := NewRingSink[int](quick)
		gate, gated := make(chan struct{}), make(chan struct{})
		cfg.DeadLetters = sink
		cfg.OnError = func(*TaskError) {}
		a := newActor(t, "slow", func(ctx context.Context, task Task[int]) error {
			switch {
			case task.Payload < 0: // holds a worker until the quick tasks are queued
				gated <- struct{}{}
				<-gate
			case task.Payload == 0: // the slow task: it ends only when cancelled
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}, cfg)
		for i := range workers {
			if err := a.Send(t.Context(), -1-i); err != nil {
				t.Fatal(err)
			}
			<-gated
		}
		for i := range quick + 1 {
			if err := a.Send(t.Context(), i); err != nil {
				t.Fatal(err)
			}
		}
		close(gate)
		synctest.Wait()

		s := a.Stats()
		conserved(t, s)
		if want := uint64(workers + quick); s.Completed != want || s.Queued != 0 || s.Running != 1 {
			t.Errorf("with the slow task running: Completed %d, Queued %d, Running %d; want %d, 0, 1 (%d workers, %d idle)",
				s.Completed, s.Queued, s.Running, want, s.Workers, s.Idle)
		}
		if s.Workers != workers || s.Idle != workers-1 {
			t.Errorf("with the slow task running: %d workers, %d idle; want %d and %d", s.Workers, s.Idle, workers, workers-1)
		}

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		err := a.Close(ctx)
		var de *DrainError
		if !errors.As(err, &de) || de.Queued != 0 || de.InFlight != 1 {
			t.Errorf("Close = %v; want a DrainError with 0 queued and 1 in flight", err)
		}
		if got := payloads(t, sink); !slices.Equal(got, []int{0}) {
			t.Errorf("Close dead-lettered %d tasks %v; want the slow task alone", len(got), got)
		}
		conserved(t, a.Stats())
	})
}

// TestIdleWorkerTakesFromRun checks that a worker with nothing to do starts
// the tasks waiting in another worker's run, behind a slow task.
func TestIdleWorkerTakesFromRun(t *testing.T) {
	noLeaks(t)
	behindSlowTask(t, Config[int]{Workers: 2}, 2)
}

// TestElasticWorkersTakeFromRun checks the same of an elastic actor, which
// grows from one worker to four as the tasks queue: the workers it grew run
// the tasks of the slow task's run.
func TestElasticWorkersTakeFromRun(t *testing.T) {
	noLeaks(t)
	behindSlowTask(t, Config[int]{MinWorkers: 1, MaxWorkers: 4}, 4)
}

// TestStopWithStolenHand checks Stop while one worker runs the slow first
// task of its hand and the other, having stolen the next tasks of that hand
// (after its own hand, and before the newer tasks left in the mailbox), runs
// another slow one: both are abandoned (each worker's current task is found,
// although the thief moved on the holder's next task), the tasks not yet
// started of both hands and of the mailbox are dead-lettered as queued, and
// every task ends exactly once.
func TestStopWithStolenHand(t *testing.T) {
	noLeaks(t)
	const (
		tasks  = 200
		stolen = 5 // the second slow task, which the thief runs
	)
	synctest.Test(t, func(t *testing.T) {
		sink := NewRingSink[int](tasks + 1)
		gate, gated, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
		var completed record[int]
		a := newActor(t, "stolen", func(_ context.Context, task Task[int]) error {
			switch task.Payload {
			case -1, -2:
				gated <- struct{}{}
				<-gate
			case 0, stolen:
				<-release // ignores its context, so Stop abandons it
			}
			completed.add(task.Payload)
			return nil
		}, Config[int]{Workers: 2, DeadLetters: sink, Grace: time.Second, OnError: func(*TaskError) {}})
		for _, p := range []int{-1, -2} {
			if err := a.Send(t.Context(), p); err != nil {
				t.Fatal(err)
			}
			<-gated
		}
		for i := range tasks + 1 {
			if err := a.Send(t.Context(), i); err != nil {
				t.Fatal(err)
			}
		}
		close(gate)
		synctest.Wait()
		if s := a.Stats(); s.Running != 2 || len(completed.get()) != 6 {
			t.Errorf("before Stop: Running %d, completed %v; want tasks 0 and %d running, -2 to 4 completed", s.Running, completed.get(), stolen)
		}

		err := a.Stop()
		done := completed.get() // before the abandoned handlers return
		close(release)
		s := a.Stats()
		conserved(t, s)
		var de *DrainError
		if !errors.As(err, &de) || de.InFlight != 2 || de.Abandoned != 2 || de.Queued != tasks+1-2-4 {
			t.Errorf("Stop = %v; want a DrainError with %d queued and 2 abandoned", err, tasks+1-2-4)
		}
		var abandoned []int
		for _, l := range letters(t, sink) {
			if errors.Is(l.Err, ErrAbandoned) {
				abandoned = append(abandoned, l.Task.Payload)
			}
		}
		if !slices.Equal(abandoned, []int{0, stolen}) {
			t.Errorf("abandoned tasks %v; want [0 %d]", abandoned, stolen)
		}
		ended := append(done, payloads(t, sink)...)
		slices.Sort(ended)
		if want := seq(-2, tasks); !slices.Equal(ended, want) {
			t.Errorf("tasks ended (completed or dead-lettered): %v; want each of -2..%d once", ended, tasks)
		}
	})
}
