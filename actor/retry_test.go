package actor

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

func TestBackoffDelay(t *testing.T) {
	noLeaks(t)
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Multiplier: 2, Jitter: 0.5}
	tests := []struct {
		attempt int
		r       float64
		want    time.Duration
	}{
		{1, 0.5, 100 * time.Millisecond}, // r = 0.5 is the middle of the jitter: no spread
		{2, 0.5, 200 * time.Millisecond},
		{3, 0.5, 400 * time.Millisecond},
		{4, 0.5, 800 * time.Millisecond},
		{5, 0.5, time.Second}, // capped
		{1000, 0.5, time.Second},
		{1, 0, 50 * time.Millisecond}, // -Jitter
		{2, 0.999999, 300 * time.Millisecond},
		{4, 0.999999, time.Second}, // 1.2s spread, capped at Max
	}
	for _, tt := range tests {
		got := b.delay(tt.attempt, tt.r)
		if d := got - tt.want; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("delay(%d, %v) = %v, want %v", tt.attempt, tt.r, got, tt.want)
		}
	}
	// Without jitter r does not matter.
	b.Jitter = 0
	if x, y := b.delay(3, 0), b.delay(3, 0.99); x != y || x != 400*time.Millisecond {
		t.Errorf("without jitter: %v and %v, want 400ms", x, y)
	}
}

// TestRetryBackoff checks when the attempts of a failing task run.
func TestRetryBackoff(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var at record[time.Duration]
		a := newActor(t, "retrying", func(ctx context.Context, task Task[int]) error {
			at.add(time.Since(start))
			if task.Attempt < 4 {
				return errors.New("not yet")
			}
			return nil
		}, Config[int]{MaxAttempts: 4, Backoff: Backoff{Initial: time.Second, Multiplier: 3}, OnError: func(*TaskError) {}})
		a.Send(t.Context(), 1)
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		// Close waited for the retries: 1s, then 3s, then 9s.
		if got, want := at.get(), []time.Duration{0, time.Second, 4 * time.Second, 13 * time.Second}; !slices.Equal(got, want) {
			t.Errorf("attempts at %v, want %v", got, want)
		}
		if s := a.Stats(); s.Completed != 1 || s.Failed != 3 || s.Retried != 3 || s.DeadLettered != 0 {
			t.Errorf("Stats %+v", s)
		}
	})
}

// TestJitterSpreadsRetries checks that jittered retries of tasks that failed
// together do not run together.
func TestJitterSpreadsRetries(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var at record[time.Duration]
		a := newActor(t, "jitter", func(ctx context.Context, task Task[int]) error {
			if task.Attempt == 1 {
				return errors.New("fail once")
			}
			at.add(time.Since(start))
			return nil
		}, Config[int]{Workers: 20, MaxAttempts: 2, Backoff: Backoff{Initial: time.Second, Jitter: 0.5}, OnError: func(*TaskError) {}})
		for i := range 20 {
			a.Send(t.Context(), i)
		}
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		got := at.get()
		slices.Sort(got)
		if len(got) != 20 || got[0] < 500*time.Millisecond || got[19] > 1500*time.Millisecond {
			t.Fatalf("retries at %v; want 20 within 1s ± 50%%", got)
		}
		if len(slices.Compact(got)) < 10 {
			t.Errorf("retries at %v: jitter did not spread them", got)
		}
	})
}

func TestFinalFailures(t *testing.T) {
	noLeaks(t)
	bad := errors.New("bad payload")
	tests := []struct {
		name     string
		err      error
		attempts int
		reason   Reason
	}{
		{"max attempts", bad, 3, ReasonMaxAttempts},
		{"permanent", Permanent(bad), 1, ReasonPermanent},
		{"permanent wrapped", errors.Join(errors.New("insert"), Permanent(bad)), 1, ReasonPermanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sink := NewRingSink[int](10)
				ran := 0
				a := newActor(t, "failing", func(ctx context.Context, task Task[int]) error {
					ran++
					return tt.err
				}, Config[int]{MaxAttempts: 3, DeadLetters: sink, OnError: func(*TaskError) {}})
				start := time.Now()
				a.Send(t.Context(), 1)
				if err := a.Close(t.Context()); err != nil {
					t.Fatal(err)
				}
				ls := letters(t, sink)
				if ran != tt.attempts || len(ls) != 1 {
					t.Fatalf("ran %d times, %d letters; want %d and 1", ran, len(ls), tt.attempts)
				}
				l := ls[0]
				if l.Reason != tt.reason || l.Attempts != tt.attempts || l.Task.Attempt != tt.attempts || !errors.Is(l.Err, bad) ||
					l.Task.Payload != 1 || !l.Time.Equal(start.Add(time.Since(start))) {
					t.Errorf("letter %+v; want reason %v after %d attempts with the handler's error", l, tt.reason, tt.attempts)
				}
				s := a.Stats()
				if s.Failed != uint64(tt.attempts) || s.Retried != uint64(tt.attempts-1) || s.DeadLettered != 1 {
					t.Errorf("Stats %+v", s)
				}
				conserved(t, s)
			})
		})
	}
}

// TestRetryLeavesWorkerFree shows a task waiting for its retry while the only
// worker runs other tasks.
func TestRetryLeavesWorkerFree(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var ran record[int]
		a := newActor(t, "patient", func(ctx context.Context, task Task[int]) error {
			if task.Payload == 1 && task.Attempt == 1 {
				return errors.New("later")
			}
			ran.add(task.Payload)
			return nil
		}, Config[int]{MaxAttempts: 2, Backoff: Backoff{Initial: time.Hour}, OnError: func(*TaskError) {}})
		a.Send(t.Context(), 1)
		synctest.Wait()
		for i := 2; i <= 5; i++ {
			a.Send(t.Context(), i)
		}
		synctest.Wait()
		if got := ran.get(); !slices.Equal(got, []int{2, 3, 4, 5}) {
			t.Fatalf("while task 1 waits for its retry, ran %v; want [2 3 4 5]", got)
		}
		s := a.Stats()
		if s.Retrying != 1 || s.Busy != 0 || s.Idle != 1 || s.Queued != 0 {
			t.Fatalf("Stats %+v: want 1 retrying with the worker idle", s)
		}
		conserved(t, s)
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := ran.get(); !slices.Equal(got, []int{2, 3, 4, 5, 1}) {
			t.Errorf("after the backoff, ran %v", got)
		}
	})
}

// TestRetryGoesFirst shows a retry whose backoff has passed served before the
// tasks queued in the mailbox, which came after it.
func TestRetryGoesFirst(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var ran record[int]
		a := newActor(t, "first", func(ctx context.Context, task Task[int]) error {
			if task.Payload == 1 && task.Attempt == 1 {
				return errors.New("later")
			}
			time.Sleep(time.Second)
			ran.add(task.Payload)
			return nil
		}, Config[int]{MaxAttempts: 2, Backoff: Backoff{Initial: 500 * time.Millisecond}, OnError: func(*TaskError) {}})
		for i := 1; i <= 4; i++ {
			a.Send(t.Context(), i)
		}
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		// Task 1 fails at 0s and is ready at 0.5s, while 2 runs; it goes before 3.
		if got := ran.get(); !slices.Equal(got, []int{2, 1, 3, 4}) {
			t.Errorf("ran %v, want [2 1 3 4]", got)
		}
	})
}

// TestTimeout checks that each attempt's context ends after Config.Timeout.
func TestTimeout(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var ended record[time.Duration]
		var failures record[*TaskError]
		a := newActor(t, "slow", func(ctx context.Context, task Task[int]) error {
			<-ctx.Done()
			ended.add(time.Since(start))
			return ctx.Err()
		}, Config[int]{Timeout: 2 * time.Second, MaxAttempts: 2, Backoff: Backoff{Initial: time.Second}, OnError: failures.add, DeadLetters: NewRingSink[int](1)})
		a.Send(t.Context(), 1)
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got, want := ended.get(), []time.Duration{2 * time.Second, 5 * time.Second}; !slices.Equal(got, want) {
			t.Errorf("attempts ended at %v, want %v", got, want)
		}
		for _, f := range failures.get() {
			if !errors.Is(f, context.DeadlineExceeded) {
				t.Errorf("failure %v, want DeadlineExceeded", f)
			}
		}
	})
}

// TestFailuresReportedInOrder shows each attempt's failure reported before
// the next attempt runs, even on another worker and with a slow error
// handler.
func TestFailuresReportedInOrder(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var reported record[int]
		a := newActor(t, "ordered", func(ctx context.Context, task Task[int]) error {
			return errors.New("no")
		}, Config[int]{Workers: 3, MaxAttempts: 3, Backoff: Backoff{Initial: time.Millisecond}, DeadLetters: NewRingSink[int](1),
			OnError: func(err *TaskError) {
				time.Sleep(time.Duration(4-err.Attempt) * time.Second) // the first report is the slowest
				reported.add(err.Attempt)
			}})
		a.Send(t.Context(), 1)
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := reported.get(); !slices.Equal(got, []int{1, 2, 3}) {
			t.Errorf("attempts reported in the order %v, want [1 2 3]", got)
		}
	})
}

// TestBackoffDelayDefaults checks that the exported Delay fills in the
// defaults the documentation of Backoff names.
// TestBackoffDelayHugeMax checks that a Max near the longest duration caps
// the delay rather than wrapping it around to a negative one, which would
// retry at once.
func TestBackoffDelayHugeMax(t *testing.T) {
	const longest = time.Duration(math.MaxInt64)
	tests := []struct {
		b       Backoff
		attempt int
	}{
		{Backoff{Initial: longest, Max: longest, Multiplier: 2}, 1},
		{Backoff{Initial: 100 * time.Millisecond, Max: longest, Multiplier: 2}, 70},
		{Backoff{Initial: longest - time.Microsecond, Max: longest, Multiplier: 1, Jitter: 0.5}, 1},
	}
	for _, tt := range tests {
		for _, r := range []float64{0.5, 0.999999} {
			if got := tt.b.delay(tt.attempt, r); got < time.Hour || got > tt.b.Max {
				t.Errorf("%+v: delay(%d, %v) = %v, want at most Max and not short", tt.b, tt.attempt, r, got)
			}
		}
	}
}

func TestBackoffDelayDefaults(t *testing.T) {
	var b Backoff
	for attempt, want := range map[int]time.Duration{0: 100 * time.Millisecond, 1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 8: 10 * time.Second} {
		if got := b.Delay(attempt, 0.5); got != want {
			t.Errorf("Backoff{}.Delay(%d) = %v, want %v", attempt, got, want)
		}
	}
	if got := (Backoff{Initial: time.Minute}).Delay(3, 0); got != time.Minute {
		t.Errorf("Initial 1m, no Max: Delay(3) = %v, want the Initial, which is the cap", got)
	}
}
