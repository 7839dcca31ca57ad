package actor

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestClockLagsLessThanATick reads the clock while fake time advances in
// steps smaller than a tick: every reading is at most a tick early and never
// late, and some readings are early, which is what makes them cheap.
func TestClockLagsLessThanATick(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		c := newClock()
		defer c.stop()
		if got, want := c.now(), c.exact(); got != want {
			t.Fatalf("first reading = %v, want the exact %v", got, want)
		}
		early := 0
		for range 20 {
			time.Sleep(clockTick / 3)
			got, want := c.now(), c.exact()
			if got > want || want-got > clockTick {
				t.Fatalf("reading %v at %v: want within a tick before", got, want)
			}
			if got < want {
				early++
			}
		}
		if early == 0 {
			t.Error("every reading was exact: the clock read the system clock each time")
		}
	})
}

// TestClockStopsWhenUnread checks that a clock no one reads stops
// refreshing, so that an idle actor costs nothing, and that the first
// reading after is exact and starts it again.
func TestClockStopsWhenUnread(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		c := newClock()
		defer c.stop()
		c.now()
		time.Sleep(2 * clockTick)
		synctest.Wait()
		if s := c.state.Load(); s != clockStopped {
			t.Fatalf("state %d two ticks after the last reading, want stopped", s)
		}
		time.Sleep(clockTick / 2)
		if got, want := c.now(), c.exact(); got != want {
			t.Errorf("reading after a pause = %v, want the exact %v", got, want)
		}
		if s := c.state.Load(); s != clockRead {
			t.Errorf("state %d after a reading, want running", s)
		}
	})
}

// TestClockStop checks that a stopped clock schedules nothing and reads the
// system clock.
func TestClockStop(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		c := newClock()
		c.now() // schedules a tick
		c.stop()
		c.stop() // idempotent
		time.Sleep(clockTick / 2)
		if got, want := c.now(), c.exact(); got != want {
			t.Errorf("reading after stop = %v, want the exact %v", got, want)
		}
		if s := c.state.Load(); s != clockStopped {
			t.Errorf("state %d after stop and a reading, want stopped", s)
		}
	})
}

// TestEnqueuedIsCoarse checks Task.Enqueued as documented: never later than
// the send, at most a tick earlier, and exact after a pause.
func TestEnqueuedIsCoarse(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var got record[Task[int]]
		a := newActor(t, "stamps", func(_ context.Context, task Task[int]) error {
			got.add(task)
			return nil
		}, Config[int]{})
		var sent []time.Time
		send := func(i int) {
			sent = append(sent, time.Now())
			if err := a.Send(t.Context(), i); err != nil {
				t.Fatal(err)
			}
		}
		send(0)
		time.Sleep(clockTick / 2)
		send(1) // within the tick: stamped as task 0
		time.Sleep(5 * clockTick)
		send(2) // after a pause: exact
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		tasks := got.get()
		for i, task := range tasks {
			if lag := sent[i].Sub(task.Enqueued); lag < 0 || lag > clockTick {
				t.Errorf("task %d sent at %v, enqueued %v: want at most a tick earlier", i, sent[i], task.Enqueued)
			}
		}
		if len(tasks) != 3 || !tasks[0].Enqueued.Equal(sent[0]) || !tasks[1].Enqueued.Equal(sent[0]) || !tasks[2].Enqueued.Equal(sent[2]) {
			t.Errorf("enqueued %v, sent %v: want the first and last exact, the second as the first", tasks, sent)
		}
	})
}

// TestClockOfActorMadeOutsideBubble uses, inside a testing/synctest bubble,
// an actor made outside it, and then outside again: the clock's timer
// belongs where the actor was made, which the runtime enforces by crashing.
func TestClockOfActorMadeOutsideBubble(t *testing.T) {
	noLeaks(t)
	a := newActor(t, "outside", nop, Config[int]{Logger: quiet})
	synctest.Test(t, func(t *testing.T) {
		if err := a.Send(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
	})
	if err := a.Send(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}
