package pgactor

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
)

// TestLeaseLostCancels checks that the heartbeat finds a lease that
// passed to another worker and cancels the handler's context with
// ErrLeaseLost, and that the handler's failure then is not recorded.
func TestLeaseLostCancels(t *testing.T) {
	r := newRig(t)
	started := make(chan uint64)
	causes := make(chan error, 1)
	a := start(r, "lost", func(ctx context.Context, task actor.Task[int]) error {
		started <- task.ID
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}, Config[int]{Lease: 500 * time.Millisecond, Heartbeat: 100 * time.Millisecond, MaxAttempts: 2, Logger: quiet(t)})
	id, err := a.Send(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	r.takeOver(id)
	if cause := within(t, causes, 10*time.Second, "the handler of a lost lease was not cancelled"); cause != ErrLeaseLost {
		t.Errorf("the handler's context ended with %v, want ErrLeaseLost", cause)
	}
	eventually(t, 10*time.Second, "the worker let the task go", func() bool { return a.running() == 0 })
	if s := stats(t, a); s.Failed != 0 || s.Running != 1 {
		t.Errorf("stats %+v: the thief's run goes on, and the lost one's failure is not recorded", s)
	}
}

// TestDeadWorker checks that the task of a worker cut off from the
// database runs again on another instance within the lease and a poll,
// counted as lost, and that the cut-off worker's handler learns it.
func TestDeadWorker(t *testing.T) {
	r := newRig(t)
	doomedPool, proxy := r.poolThroughProxy()

	const lease = time.Second
	started := make(chan struct{})
	causes := make(chan error, 1)
	doomed, err := New(t.Context(), doomedPool, "dying", func(ctx context.Context, task actor.Task[int]) error {
		close(started)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}, Config[int]{Schema: r.schema, Lease: lease, Heartbeat: lease / 4, Logger: quiet(t)})
	if err != nil {
		t.Fatal(err)
	}
	id, err := doomed.Send(t.Context(), 42)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	cut := time.Now()
	proxy.Close() // the worker is cut off: its heartbeats fail from now on

	reran := make(chan actor.Task[int], 1)
	heir := start(r, "dying", func(ctx context.Context, task actor.Task[int]) error {
		reran <- task
		return nil
	}, Config[int]{PollInterval: 100 * time.Millisecond})
	task := within(t, reran, 20*time.Second, "the task of a cut-off worker never ran again")
	if task.ID != id || task.Attempt != 2 || task.Payload != 42 {
		t.Errorf("ran again as %+v", task)
	}
	// The lease had up to one heartbeat's worth left when the cut came.
	if d := time.Since(cut); d < lease/2 || d > lease+5*time.Second {
		t.Errorf("ran again %v after the cut, want about the lease (%v)", d, lease)
	}
	if cause := within(t, causes, 10*time.Second, "the cut-off handler was never cancelled"); cause != ErrLeaseLost {
		t.Errorf("the cut-off handler's context ended with %v, want ErrLeaseLost", cause)
	}
	eventually(t, 10*time.Second, "completed", func() bool { return stats(t, heir).Completed == 1 })
	if s := stats(t, heir); s.Lost != 1 || s.Accepted != 1 {
		t.Errorf("stats %+v, want 1 lost run", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	doomed.Close(ctx) // fails to give back what it no longer holds: no matter
}

// TestLostTooOften checks that a task whose workers are lost more than
// MaxLost times is dead-lettered with ReasonLost, not run again.
func TestLostTooOften(t *testing.T) {
	r := newRig(t)
	sender := start(r, "lossy", nil, Config[int]{})
	id, err := sender.Send(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	// Two runs lost already, and a third whose lease ran out.
	r.exec(`UPDATE {s}.tasks SET owner = 'dead', runs = 3, attempt = 3, lost = 2, available_at = now() - interval '1 second' WHERE id = $1`, int64(id))
	ran := make(chan struct{}, 1)
	var errs testenv.TaskErrors
	a := start(r, "lossy", func(ctx context.Context, task actor.Task[int]) error {
		ran <- struct{}{}
		return nil
	}, Config[int]{MaxLost: 2, OnError: errs.Add})
	eventually(t, 10*time.Second, "dead-lettered", func() bool { return stats(t, a).DeadLettered == 1 })
	letters, err := a.DeadLetters(t.Context(), LetterFilter{})
	if err != nil || len(letters) != 1 || letters[0].Reason != ReasonLost || letters[0].Lost != 3 || letters[0].Attempts != 3 {
		t.Fatalf("dead letters %+v, %v; want one, lost 3 times", letters, err)
	}
	if len(ran) != 0 {
		t.Error("the handler ran a task lost too often")
	}
	if e := errs.All(); len(e) != 1 || !e[0].Final {
		t.Errorf("OnError got %v", e)
	}
	if s := stats(t, a); s.Lost != 1 {
		t.Errorf("stats %+v: the take-over should count one lost run", s)
	}
}

// TestLeaseRenewedUnderLoad checks that the heartbeat renews a long task's
// lease while a stream of short tasks keeps the pump's rounds in flight
// back to back, at the default two rounds and at eight. A heartbeat that
// waited for a moment with no round in flight waited for seconds there,
// the lease ran out, and the task, first in the queue by its priority,
// ran again while its first run went on.
func TestLeaseRenewedUnderLoad(t *testing.T) {
	for _, rounds := range []int{0, 8} {
		t.Run(fmt.Sprintf("rounds=%d", rounds), func(t *testing.T) { testLeaseRenewedUnderLoad(t, rounds) })
	}
}

func testLeaseRenewedUnderLoad(t *testing.T, rounds int) {
	r := newRig(t)
	const long = -1
	var longRuns atomic.Int32
	ended := make(chan error, 8)
	a := start(r, "busy", func(ctx context.Context, task actor.Task[int]) error {
		if task.Payload != long {
			return nil
		}
		longRuns.Add(1)
		select {
		case <-ctx.Done():
			ended <- context.Cause(ctx)
		case <-time.After(3 * time.Second):
			ended <- nil
		}
		return nil
	}, Config[int]{Workers: 32, Rounds: rounds, Lease: time.Second, Heartbeat: 200 * time.Millisecond, Logger: quiet(t)})

	ctx, stop := context.WithCancel(t.Context())
	var producers sync.WaitGroup
	batch := make([]int, 200)
	for range 4 {
		producers.Go(func() {
			for ctx.Err() == nil {
				a.SendBatch(ctx, batch) // fails only once ctx ends
			}
		})
	}
	eventually(t, 10*time.Second, "the short tasks did not start", func() bool { return stats(t, a).Completed > 1000 })
	if _, err := a.Send(t.Context(), long, Priority(1)); err != nil {
		t.Fatal(err)
	}
	err := within(t, ended, 20*time.Second, "the long task did not end")
	stop()
	producers.Wait()
	if err != nil {
		t.Errorf("the long task's context ended with %v; its lease should have been renewed", err)
	}
	if n := longRuns.Load(); n != 1 {
		t.Errorf("the long task ran %d times, want once", n)
	}
	if s := stats(t, a); s.Lost != 0 {
		t.Errorf("stats %+v: no run should be lost", s)
	}
}

// TestLeaseTakenAgain checks what becomes of a lease whose task this
// instance fetched again once that lease had run out (a pump stalled past
// the lease, its heartbeats lost): the old lease's handler is told it is
// lost, and settling the old lease leaves the new one held, so that the
// heartbeat still renews it.
func TestLeaseTakenAgain(t *testing.T) {
	r := newRig(t)
	a := start(r, "again", nil, Config[int]{Logger: quiet(t)})
	old, again := &lease{id: 7, token: 1}, &lease{id: 7, token: 2}
	a.hold([]*lease{old}, time.Now())
	a.hold([]*lease{again}, time.Now())
	if cause := context.Cause(old.ctx); cause != ErrLeaseLost {
		t.Errorf("the old lease's handler context ended with %v, want ErrLeaseLost", cause)
	}
	if again.ctx.Err() != nil {
		t.Errorf("the new lease's handler context ended: %v", context.Cause(again.ctx))
	}
	a.forget(old)
	a.mu.Lock()
	held := a.leases[7]
	a.mu.Unlock()
	if held != again {
		t.Errorf("after the old lease was settled, the instance holds %+v, want the new lease", held)
	}
	a.forget(again)
	if n := a.running(); n != 0 {
		t.Errorf("%d leases held after both were settled", n)
	}
}

// TestLeaseStalledTold checks that a worker cut off by a network that
// stops answering — its heartbeat round hangs rather than fails — has its
// handler told ErrLeaseLost when its lease runs out, as far as its process
// knows, not a whole Lease after the heartbeat that hung was sent: by
// then another worker had run the task beside it for most of a heartbeat.
func TestLeaseStalledTold(t *testing.T) {
	r := newRig(t)
	stalledPool, proxy := r.poolThroughProxy()

	const lease = time.Second
	started := make(chan struct{})
	told := make(chan time.Time, 1)
	stalled, err := New(t.Context(), stalledPool, "stalled", func(ctx context.Context, task actor.Task[int]) error {
		close(started)
		<-ctx.Done()
		if context.Cause(ctx) == ErrLeaseLost {
			told <- time.Now()
		}
		return ctx.Err()
	}, Config[int]{Schema: r.schema, Lease: lease, Heartbeat: lease / 2, Logger: quiet(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		proxy.Resume()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stalled.Close(ctx)
	}()
	if _, err := stalled.Send(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	<-started
	time.Sleep(lease / 4)
	proxy.Stall() // the heartbeats hang from now on

	reran := make(chan time.Time, 1)
	start(r, "stalled", func(ctx context.Context, task actor.Task[int]) error {
		reran <- time.Now()
		return nil
	}, Config[int]{PollInterval: 20 * time.Millisecond})
	heir := within(t, reran, 10*time.Second, "the task of a stalled worker never ran again")
	first := within(t, told, 10*time.Second, "the stalled handler was never told its lease was lost")
	if late := first.Sub(heir); late > 150*time.Millisecond {
		t.Errorf("the stalled handler was told its lease was lost %v after another worker took the task", late)
	}
}
