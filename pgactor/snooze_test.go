package pgactor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// TestSnoozeKeepsAttempts runs tasks whose handler snoozes, fails and
// succeeds in turn, with MaxAttempts 2, and checks the attempts the
// handler saw, that each task completes, and that a snooze is counted
// neither failed nor retried. The actor polls hourly: a snoozed task is
// found at its time because the snooze wakes the process's pump then.
func TestSnoozeKeepsAttempts(t *testing.T) {
	errFlaky := errors.New("flaky")
	snooze := Snooze(time.Millisecond)
	for _, tt := range []struct {
		name     string
		runs     []error // what each run returns; then nil
		attempts []int   // the Attempt each run sees
		failed   uint64
	}{
		{"snoozes 3 times", []error{snooze, snooze, snooze}, []int{1, 1, 1, 1}, 0},
		{"wrapped snooze", []error{fmt.Errorf("busy: %w", Snooze(0))}, []int{1, 1}, 0},
		{"fails then snoozes at the last attempt", []error{errFlaky, snooze, snooze}, []int{1, 2, 2, 2}, 1},
		{"snoozes then fails", []error{snooze, errFlaky}, []int{1, 1, 2}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			var mu sync.Mutex
			var seen []int
			done := make(chan struct{})
			a := start(r, "snoozer", func(ctx context.Context, task actor.Task[int]) error {
				mu.Lock()
				defer mu.Unlock()
				run := len(seen)
				seen = append(seen, task.Attempt)
				if run < len(tt.runs) {
					return tt.runs[run]
				}
				close(done)
				return nil
			}, Config[int]{Workers: 1, MaxAttempts: 2, Backoff: actor.Backoff{Initial: time.Millisecond}, PollInterval: time.Hour})
			if _, err := a.Send(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			within(t, done, 30*time.Second, "the task did not complete")
			eventually(t, 10*time.Second, "the completion counted", func() bool { return stats(t, a).Completed == 1 })
			mu.Lock()
			if !slices.Equal(seen, tt.attempts) {
				t.Errorf("the handler saw attempts %v, want %v", seen, tt.attempts)
			}
			mu.Unlock()
			if s := stats(t, a); s.Failed != tt.failed || s.Retried != tt.failed || s.DeadLettered != 0 {
				t.Errorf("stats %+v: want %d failed and retried, none dead-lettered", s, tt.failed)
			}
		})
	}
}

// TestSnoozeWaits checks that a snoozed task waits for its delay as a
// scheduled task, or a retrying one after a failed attempt, its attempt
// given back and its last error kept.
func TestSnoozeWaits(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	snoozed := make(chan uint64, 2)
	a := start(r, "sleepy", func(ctx context.Context, task actor.Task[int]) error {
		if task.Payload == 2 && task.Attempt == 1 {
			return errors.New("first try failed")
		}
		snoozed <- task.ID
		return Snooze(time.Hour)
	}, Config[int]{Workers: 1, MaxAttempts: 3, Backoff: actor.Backoff{Initial: time.Millisecond}})
	for _, tt := range []struct {
		payload int
		state   TaskState
		attempt int
		lastErr string
	}{
		{1, TaskScheduled, 0, ""},
		{2, TaskRetrying, 1, "first try failed"},
	} {
		before := time.Now()
		if _, err := a.Send(ctx, tt.payload); err != nil {
			t.Fatal(err)
		}
		id := within(t, snoozed, 30*time.Second, "the handler did not run")
		var got TaskInfo
		eventually(t, 10*time.Second, "the snooze recorded", func() bool {
			var err error
			got, err = a.Task(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return got.Owner == ""
		})
		if got.State != tt.state || got.Attempt != tt.attempt || got.LastError != tt.lastErr ||
			got.RunAt.Before(before.Add(time.Hour-time.Minute)) || got.RunAt.After(time.Now().Add(time.Hour+time.Minute)) {
			t.Errorf("task %d after Snooze(1h): %+v; want %s, attempt %d, last error %q, due in an hour", id, got, tt.state, tt.attempt, tt.lastErr)
		}
	}
	if s := stats(t, a); s.Failed != 1 || s.Retried != 1 {
		t.Errorf("stats %+v: want the one failure only", s)
	}
}

// TestSnoozeNegative checks that a negative snooze fails the attempt, with
// an error that says why, and dead-letters the task at its last attempt.
func TestSnoozeNegative(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	failures := make(chan *actor.TaskError, 1)
	a := start(r, "backwards", func(ctx context.Context, task actor.Task[int]) error {
		return Snooze(-time.Second)
	}, Config[int]{Workers: 1, OnError: func(e *actor.TaskError) { failures <- e }})
	id, err := a.Send(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	te := within(t, failures, 30*time.Second, "no failure reported")
	const want = "Snooze(-1s): the delay must be 0 or more"
	if !te.Final || !strings.Contains(te.Err.Error(), want) {
		t.Errorf("reported %v (final %v), want a final failure saying %q", te.Err, te.Final, want)
	}
	eventually(t, 10*time.Second, "the task dead-lettered", func() bool { return stats(t, a).DeadLettered == 1 })
	got, err := a.Task(ctx, id)
	if err != nil || got.Reason != ReasonMaxAttempts.String() || !strings.Contains(got.LastError, want) {
		t.Errorf("task after a negative snooze: %+v, %v; want a dead letter of max attempts saying %q", got, err, want)
	}
}
