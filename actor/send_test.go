package actor

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

func TestSendRunsEveryTaskInOrder(t *testing.T) {
	noLeaks(t)
	var got record[Task[int]]
	a := newActor(t, "order", func(_ context.Context, task Task[int]) error {
		got.add(task)
		return nil
	}, Config[int]{})
	for i := range 100 {
		var opts []SendOption
		if i%2 == 1 {
			opts = append(opts, WithType("odd"))
		}
		if err := a.Send(t.Context(), i, opts...); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	tasks := got.get()
	if len(tasks) != 100 {
		t.Fatalf("handled %d tasks, want 100", len(tasks))
	}
	for i, task := range tasks {
		wantType := "int"
		if i%2 == 1 {
			wantType = "odd"
		}
		if task.Payload != i || task.ID != uint64(i+1) || task.Type != wantType || task.Attempt != 1 || task.Enqueued.IsZero() {
			t.Errorf("task %d = %+v; want payload %d, ID %d, type %q, attempt 1, an enqueue time", i, task, i, i+1, wantType)
		}
	}
	s := a.Stats()
	if s.Submitted != 100 || s.Completed != 100 {
		t.Errorf("Stats = %+v, want 100 submitted and completed", s)
	}
	conserved(t, s)
}

// blocked returns an actor with one worker held inside the handler of task
// 0 until release is closed, and a mailbox of two that holds tasks 1 and 2.
// Call it in a synctest bubble.
func blocked(t *testing.T, overflow Overflow, ran *record[int]) (a *Actor[int], sink *RingSink[int], release chan struct{}) {
	t.Helper()
	release = make(chan struct{})
	sink = NewRingSink[int](10)
	a = newActor(t, "full", func(_ context.Context, task Task[int]) error {
		if task.Payload == 0 {
			<-release
		}
		ran.add(task.Payload)
		return nil
	}, Config[int]{Capacity: 2, Overflow: overflow, DeadLetters: sink})
	for i := range 3 {
		if err := a.Send(t.Context(), i); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // task 0 reaches the worker before 1 and 2 fill the mailbox
	}
	if s := a.Stats(); s.Queued != 2 || s.Running != 1 {
		t.Fatalf("setup: %+v, want 2 queued and 1 running", s)
	}
	return a, sink, release
}

func TestOverflow(t *testing.T) {
	noLeaks(t)
	tests := []struct {
		overflow Overflow
		sendErr  error // what Send(3) returns on a full mailbox
		tryErr   error // what TrySend(4) returns
		ran      []int // payloads handled, in order
		dropped  []int // payloads dead-lettered
	}{
		{OverflowBlock, context.DeadlineExceeded, ErrMailboxFull, []int{0, 1, 2}, nil},
		{OverflowReject, ErrMailboxFull, ErrMailboxFull, []int{0, 1, 2}, nil},
		{OverflowDropOldest, nil, nil, []int{0, 3, 4}, []int{1, 2}},
		{OverflowDropNewest, nil, nil, []int{0, 1, 2}, []int{3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.overflow.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var ran record[int]
				a, sink, release := blocked(t, tt.overflow, &ran)
				start := time.Now()
				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				defer cancel()
				if err := a.Send(ctx, 3); !errors.Is(err, tt.sendErr) || (err == nil) != (tt.sendErr == nil) {
					t.Errorf("Send on a full mailbox = %v, want %v", err, tt.sendErr)
				}
				// Only OverflowBlock waits, and only until ctx ends.
				wantWait := time.Duration(0)
				if tt.overflow == OverflowBlock {
					wantWait = time.Second
				}
				if waited := time.Since(start); waited != wantWait {
					t.Errorf("Send waited %v, want %v", waited, wantWait)
				}
				if err := a.TrySend(4); !errors.Is(err, tt.tryErr) || (err == nil) != (tt.tryErr == nil) {
					t.Errorf("TrySend on a full mailbox = %v, want %v", err, tt.tryErr)
				}
				close(release)
				if err := a.Close(t.Context()); err != nil {
					t.Fatal(err)
				}
				if got := ran.get(); !slices.Equal(got, tt.ran) {
					t.Errorf("handled %v, want %v", got, tt.ran)
				}
				ls := letters(t, sink)
				var dropped []int
				for _, l := range ls {
					dropped = append(dropped, l.Task.Payload)
					if l.Reason != ReasonDropped || l.Attempts != 0 || l.Actor != "full" {
						t.Errorf("letter %+v, want reason dropped, 0 attempts, actor full", l)
					}
				}
				if !slices.Equal(dropped, tt.dropped) {
					t.Errorf("dead-lettered %v, want %v", dropped, tt.dropped)
				}
				s := a.Stats()
				if s.Dropped != uint64(len(tt.dropped)) || s.DeadLettered != s.Dropped {
					t.Errorf("Stats %+v: want Dropped = DeadLettered = %d", s, len(tt.dropped))
				}
				if want := uint64(5 - len(tt.ran) - len(tt.dropped)); s.Rejected != want {
					t.Errorf("Rejected = %d, want %d", s.Rejected, want)
				}
				conserved(t, s)
			})
		})
	}
}

// TestSendWaitsForRoom shows blocked senders waiting in line and getting in,
// in the order they came, as room is made.
func TestSendWaitsForRoom(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var ran record[int]
		a, _, release := blocked(t, OverflowBlock, &ran)
		errs := make(chan error, 3)
		for i := 3; i < 6; i++ {
			go func() { errs <- a.Send(t.Context(), i) }()
			synctest.Wait() // so that they queue in order
		}
		if s := a.Stats(); s.Blocked != 3 || s.Queued != 2 {
			t.Fatalf("with a full mailbox: %+v, want 3 blocked and 2 queued", s)
		}
		conserved(t, a.Stats()) // blocked tasks are neither submitted-and-pending nor lost
		close(release)
		for range 3 {
			if err := <-errs; err != nil {
				t.Errorf("blocked Send = %v", err)
			}
		}
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got, want := ran.get(), []int{0, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
			t.Errorf("handled %v, want %v", got, want)
		}
	})
}

func TestBlockedSendEndsAtClose(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var ran record[int]
		a, _, release := blocked(t, OverflowBlock, &ran)
		errc := make(chan error)
		go func() { errc <- a.Send(t.Context(), 3) }()
		synctest.Wait()
		closed := make(chan error)
		go func() { closed <- a.Close(t.Context()) }()
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Errorf("Send blocked when Close began = %v, want ErrClosed", err)
		}
		close(release)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if got, want := ran.get(), []int{0, 1, 2}; !slices.Equal(got, want) {
			t.Errorf("handled %v, want %v", got, want)
		}
		if s := a.Stats(); s.Rejected != 1 || s.Blocked != 0 {
			t.Errorf("Stats %+v: want 1 rejected, none blocked", s)
		}
	})
}

// gatedSink is a RingSink whose Put of a rejected letter waits until gate
// is closed, as a slow disk would.
type gatedSink struct {
	*RingSink[int]
	gate chan struct{}
}

func (s gatedSink) Put(l DeadLetter[int]) error {
	if l.Reason == ReasonRejected {
		<-s.gate
	}
	return s.RingSink.Put(l)
}

// TestCloseWaitsForLettersOfBlockedSends checks that, with
// DeadLetterRejected, Close waits for the letters of the sends it refused
// while they waited for room, as it does for the other letters it causes,
// so that the sink can be closed once Close returns without losing them.
func TestCloseWaitsForLettersOfBlockedSends(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		sink := gatedSink{NewRingSink[int](10), make(chan struct{})}
		a := newActor(t, "full", func(_ context.Context, task Task[int]) error {
			if task.Payload == 0 {
				<-release
			}
			return nil
		}, Config[int]{Capacity: 1, DeadLetters: sink, DeadLetterRejected: true})
		for i := range 2 {
			if err := a.Send(t.Context(), i); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		errc := make(chan error)
		go func() { errc <- a.Send(t.Context(), 2) }()
		synctest.Wait()
		if s := a.Stats(); s.Blocked != 1 {
			t.Fatalf("setup: %+v, want a send blocked", s)
		}
		closed := make(chan struct{})
		go func() {
			if err := a.Close(t.Context()); err != nil {
				t.Error(err)
			}
			close(closed)
		}()
		synctest.Wait() // Close refused the blocked send; its letter is at the gate
		close(release)
		synctest.Wait() // tasks 0 and 1 done
		select {
		case <-closed:
			t.Error("Close returned before the letter of the send it refused was put")
		default:
		}
		close(sink.gate)
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Errorf("blocked Send = %v, want ErrClosed", err)
		}
		<-closed
		if ls := letters(t, sink.RingSink); len(ls) != 1 || ls[0].Task.Payload != 2 || ls[0].Reason != ReasonRejected {
			t.Errorf("letters %+v, want the rejected task 2", ls)
		}
	})
}

// TestSendAfterClose checks that every way to send says ErrClosed after
// Close or Stop, and none panics (workerpool #76, conc #103).
func TestSendAfterClose(t *testing.T) {
	noLeaks(t)
	sends := map[string]func(a *Actor[int]) error{
		"Send":    func(a *Actor[int]) error { return a.Send(context.Background(), 1) },
		"TrySend": func(a *Actor[int]) error { return a.TrySend(1) },
		"SendBatch": func(a *Actor[int]) error {
			n, err := a.SendBatch(context.Background(), []int{1, 2, 3})
			if n != 0 {
				return errors.New("accepted part of the batch")
			}
			return err
		},
		"Ask": func(a *Actor[int]) error { return a.Ask(context.Background(), 1) },
		"Replay": func(a *Actor[int]) error {
			ring := NewRingSink[int](1)
			ring.Put(DeadLetter[int]{Task: Task[int]{Payload: 1}})
			_, err := a.Replay(context.Background(), ring)
			return err
		},
	}
	for _, stop := range []string{"Close", "Stop"} {
		for name, send := range sends {
			t.Run(stop+"/"+name, func(t *testing.T) {
				a := newActor(t, "closed", func(context.Context, Task[int]) error { return nil }, Config[int]{Capacity: 1})
				if stop == "Close" {
					a.Close(t.Context())
				} else {
					a.Stop()
				}
				if err := send(a); !errors.Is(err, ErrClosed) {
					t.Errorf("%s after %s = %v, want ErrClosed", name, stop, err)
				}
				s := a.Stats()
				if s.Rejected == 0 || s.Rejected != s.Submitted {
					t.Errorf("Stats %+v: every submitted task must be rejected", s)
				}
				conserved(t, s)
			})
		}
	}
}

func TestSendBatch(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var ran record[int]
		a := newActor(t, "batch", func(_ context.Context, task Task[int]) error {
			time.Sleep(time.Second)
			ran.add(task.Payload)
			return nil
		}, Config[int]{Capacity: 2})

		// A batch larger than the mailbox goes in as room is made.
		n, err := a.SendBatch(t.Context(), []int{0, 1, 2, 3, 4, 5}, WithType("batch"))
		if n != 6 || err != nil {
			t.Fatalf("SendBatch = %d, %v; want 6, nil", n, err)
		}

		// A batch whose context ends stops there; the rest is refused.
		ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
		defer cancel()
		n, err = a.SendBatch(ctx, []int{6, 7, 8, 9, 10, 11})
		if !errors.Is(err, context.DeadlineExceeded) || n == 0 || n == 6 {
			t.Fatalf("SendBatch with a short context = %d, %v; want part of the batch and DeadlineExceeded", n, err)
		}
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := ran.get(); len(got) != 6+n || !slices.IsSorted(got) {
			t.Errorf("handled %v, want the first %d payloads in order", got, 6+n)
		}
		s := a.Stats()
		if s.Submitted != 12 || s.Rejected != uint64(6-n) || s.Completed != uint64(6+n) {
			t.Errorf("Stats %+v: want 12 submitted, %d rejected, %d completed", s, 6-n, 6+n)
		}
		conserved(t, s)
	})
}

// reply is a request that carries where its answer goes.
type reply struct {
	in  int
	out *int
}

func TestAsk(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		hold := make(chan struct{})
		a := newActor(t, "ask", func(ctx context.Context, task Task[reply]) error {
			switch task.Payload.in {
			case -1:
				return Permanent(errors.New("negative"))
			case -2:
				<-hold
			}
			*task.Payload.out = task.Payload.in * 2
			return nil
		}, Config[reply]{Capacity: 1, Overflow: OverflowDropOldest, OnError: func(*TaskError) {}})

		// Request and reply.
		var out int
		if err := a.Ask(t.Context(), reply{21, &out}); err != nil || out != 42 {
			t.Fatalf("Ask = %v with answer %d, want nil and 42", err, out)
		}

		// A task that fails for good answers with its TaskError.
		err := a.Ask(t.Context(), reply{-1, &out})
		var te *TaskError
		if !errors.As(err, &te) || !te.Final || !errors.Is(err, ErrPermanent) || te.Actor != "ask" {
			t.Fatalf("Ask of a failing task = %v, want a final *TaskError wrapping ErrPermanent", err)
		}

		// Hold the worker; queue one Ask, then drop it with another.
		go a.Send(t.Context(), reply{-2, &out})
		synctest.Wait()
		dropped := make(chan error)
		go func() { dropped <- a.Ask(t.Context(), reply{1, new(int)}) }()
		synctest.Wait()
		go a.Ask(t.Context(), reply{2, new(int)})
		if err := <-dropped; !errors.Is(err, ErrDropped) {
			t.Errorf("Ask of a dropped task = %v, want ErrDropped", err)
		}

		// An Ask whose context ends stops waiting; its task goes on.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := a.Ask(ctx, reply{3, new(int)}); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Ask with a short context = %v, want DeadlineExceeded", err)
		}

		// The actor closes first: Ask answers ErrClosed.
		closed := make(chan error)
		go func() { closed <- a.Ask(t.Context(), reply{4, new(int)}) }()
		synctest.Wait()
		stopped := make(chan error)
		go func() { stopped <- a.Stop() }()
		if err := <-closed; !errors.Is(err, ErrClosed) {
			t.Errorf("Ask when the actor stops first = %v, want ErrClosed", err)
		}
		close(hold)
		<-stopped
		conserved(t, a.Stats())
	})
}

func TestDeadLetterRejected(t *testing.T) {
	noLeaks(t)
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[on], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				sink := NewRingSink[int](10)
				a := newActor(t, "refusing", func(_ context.Context, task Task[int]) error {
					<-release
					return nil
				}, Config[int]{Capacity: 1, Overflow: OverflowReject, DeadLetters: sink, DeadLetterRejected: on})
				a.Send(t.Context(), 0)
				synctest.Wait()
				a.Send(t.Context(), 1)
				if err := a.Send(t.Context(), 2); !errors.Is(err, ErrMailboxFull) {
					t.Fatalf("Send on a full mailbox = %v", err)
				}
				close(release)
				a.Close(t.Context())
				if err := a.Send(t.Context(), 3); !errors.Is(err, ErrClosed) {
					t.Fatalf("Send after Close = %v", err)
				}
				ls := letters(t, sink)
				if !on {
					if len(ls) != 0 {
						t.Errorf("letters %v without DeadLetterRejected", ls)
					}
					return
				}
				if len(ls) != 2 || ls[0].Task.Payload != 2 || !errors.Is(ls[0].Err, ErrMailboxFull) ||
					ls[1].Task.Payload != 3 || !errors.Is(ls[1].Err, ErrClosed) {
					t.Fatalf("letters %+v; want tasks 2 (mailbox full) and 3 (closed)", ls)
				}
				for _, l := range ls {
					if l.Reason != ReasonRejected || l.Task.ID == 0 {
						t.Errorf("letter %+v, want reason rejected and the task's ID", l)
					}
				}
				// Rejected, not dead-lettered: the sender was told.
				s := a.Stats()
				if s.Rejected != 2 || s.DeadLettered != 0 {
					t.Errorf("Stats %+v; want 2 rejected, 0 dead-lettered", s)
				}
				conserved(t, s)
			})
		})
	}
}
