package actor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/leakcheck"
)

// behaviour is what the conservation test's handler does with a payload.
type behaviour int

const (
	succeed     behaviour = iota
	failOnce              // fails its first attempt, then succeeds
	failAlways            // runs out of attempts
	failForGood           // returns a Permanent error
	panics                // panics on its first attempt
	exits                 // calls runtime.Goexit on its first attempt
	ignoresCtx            // sleeps past the grace, deaf to its context
	behaviours
)

// behaviourOf gives one payload in 32 each misbehaviour; the rest succeed.
func behaviourOf(payload int) behaviour {
	if b := behaviour(payload % 32); b < behaviours {
		return b
	}
	return succeed
}

// tally records, per payload, what the actor did with it.
type tally struct {
	mu        sync.Mutex
	completed map[int]int // handler returned nil
	letters   map[int][]DeadLetter[int]
}

func (t *tally) Put(l DeadLetter[int]) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.letters[l.Task.Payload] = append(t.letters[l.Task.Payload], l)
	return nil
}

// TestConservation races 1,024 producers, using every way to send, against
// Close, with handlers that succeed, fail, fail for good, panic, call
// runtime.Goexit or ignore their context, and proves that every task offered
// ends exactly once — completed, dead-lettered with a reason, or refused to
// its sender — and that the counters say so exactly, in every snapshot and
// at the end.
func TestConservation(t *testing.T) {
	noLeaks(t)
	const (
		producers   = 1024
		perProducer = 12
	)
	configs := []struct {
		name string
		cfg  Config[int]
	}{
		{"bounded blocking", Config[int]{Workers: 8, Capacity: 64}},
		{"bounded rejecting", Config[int]{Workers: 8, Capacity: 64, Overflow: OverflowReject}},
		{"dropping oldest", Config[int]{Workers: 8, Capacity: 64, Overflow: OverflowDropOldest}},
		{"dropping newest", Config[int]{Workers: 8, Capacity: 64, Overflow: OverflowDropNewest}},
		{"unbounded elastic", Config[int]{MinWorkers: 1, MaxWorkers: 16, KeepAlive: time.Millisecond}},
		// Few workers and a long queue: workers run hands (see hand.go).
		{"unbounded fixed", Config[int]{Workers: 2}},
	}
	for _, tc := range configs {
		t.Run(tc.name, func(t *testing.T) {
			before := leakcheck.Take()
			tl := &tally{completed: map[int]int{}, letters: map[int][]DeadLetter[int]{}}
			cfg := tc.cfg
			cfg.MaxAttempts = 3
			cfg.Backoff = Backoff{Initial: 100 * time.Microsecond, Max: time.Millisecond, Jitter: 0.5}
			cfg.Grace = 5 * time.Millisecond
			cfg.DeadLetters = tl
			cfg.OnError = func(*TaskError) {}
			a := newActor(t, "conservation", func(ctx context.Context, task Task[int]) error {
				first := task.Attempt == 1
				switch behaviourOf(task.Payload) {
				case failOnce:
					if first {
						return errors.New("transient")
					}
				case failAlways:
					return errors.New("always")
				case failForGood:
					return Permanent(errors.New("bad payload"))
				case panics:
					if first {
						panic("handler bug")
					}
				case exits:
					if first {
						runtime.Goexit()
					}
				case ignoresCtx:
					time.Sleep(2 * cfg.Grace)
				}
				tl.mu.Lock()
				tl.completed[task.Payload]++
				tl.mu.Unlock()
				return nil
			}, cfg)

			// Every snapshot taken during the race must balance.
			stopWatch := make(chan struct{})
			watched := make(chan int)
			go func() {
				n := 0
				for {
					select {
					case <-stopWatch:
						watched <- n
						return
					default:
					}
					conserved(t, a.Stats())
					n++
					runtime.Gosched()
				}
			}()

			// What each sender was told, per payload.
			var (
				mu       sync.Mutex
				accepted = map[int]bool{}
				refused  = map[int]bool{}
				asked    = map[int]error{}
				offered  atomic.Int64
			)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for p := range producers {
				wg.Go(func() {
					<-start
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(50))*time.Millisecond)
					defer cancel()
					for s := 0; s < perProducer; {
						// Pace the producers, so that the actor works while
						// they send rather than after.
						time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
						payload := p*perProducer + s
						switch s % 4 {
						case 0:
							offered.Add(1)
							err := a.Send(ctx, payload)
							mu.Lock()
							if err == nil {
								accepted[payload] = true
							} else {
								refused[payload] = true
							}
							mu.Unlock()
							s++
						case 1:
							offered.Add(1)
							err := a.TrySend(payload)
							mu.Lock()
							if err == nil {
								accepted[payload] = true
							} else {
								refused[payload] = true
							}
							mu.Unlock()
							s++
						case 2:
							batch := []int{payload, payload + 1}
							offered.Add(2)
							n, _ := a.SendBatch(ctx, batch)
							mu.Lock()
							for i, b := range batch {
								if i < n {
									accepted[b] = true
								} else {
									refused[b] = true
								}
							}
							mu.Unlock()
							s += 2
						}
						if s%4 == 3 && s < perProducer {
							payload := p*perProducer + s
							offered.Add(1)
							err := a.Ask(context.Background(), payload)
							mu.Lock()
							asked[payload] = err
							mu.Unlock()
							s++
						}
					}
				})
			}

			close(start)
			// Close mid-stream, at a random point of the second quarter.
			for target := int64(producers * perProducer * (1 + rand.Float64()) / 4); offered.Load() < target; {
				time.Sleep(50 * time.Microsecond)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			closeStart := time.Now()
			closeErr := a.Close(ctx)
			if took := time.Since(closeStart); took > 10*time.Millisecond+cfg.Grace+2*time.Second {
				// The exact bound is proven with a fake clock in
				// TestCloseDeadline; here only a gross overrun fails.
				t.Errorf("Close took %v", took)
			}
			wg.Wait()
			close(stopWatch)
			t.Logf("Close = %v; %d snapshots balanced during the race", closeErr, <-watched)
			// Let abandoned handlers return before counting completions.
			if gs := before.Left(10 * time.Second); len(gs) > 0 {
				t.Fatalf("%d goroutines of the actor outlived its handlers", len(gs))
			}

			s := a.Stats()
			tl.mu.Lock()
			defer tl.mu.Unlock()
			var completed, deadLettered, dropped, abandoned, refusedN uint64
			for payload := range int(offered.Load()) {
				ls := tl.letters[payload]
				done := tl.completed[payload]
				errAsk, isAsk := asked[payload]
				where := fmt.Sprintf("payload %d (behaviour %d, accepted %v, refused %v, ask %v): completed %d times, letters %+v",
					payload, behaviourOf(payload), accepted[payload], refused[payload], errAsk, done, ls)
				if len(ls) > 1 || done > 1 {
					t.Fatalf("%s: ended more than once", where)
				}
				isRefused := refused[payload] || (isAsk && len(ls) == 0 && done == 0 && errors.Is(errAsk, ErrClosed))
				if isRefused {
					refusedN++
					if len(ls) != 0 || done != 0 {
						t.Fatalf("%s: a refused task ran or was dead-lettered", where)
					}
					continue
				}
				if !accepted[payload] && !isAsk {
					t.Fatalf("%s: neither accepted nor refused", where)
				}
				switch {
				case len(ls) == 1:
					// An abandoned handler may still have completed its
					// task; no other dead-lettered task may have.
					if errors.Is(ls[0].Err, ErrAbandoned) {
						abandoned++
					} else if done == 1 {
						t.Fatalf("%s: completed and dead-lettered, but not abandoned", where)
					}
					deadLettered++
				case done == 1:
					completed++
				default:
					t.Fatalf("%s: accepted, but neither completed nor dead-lettered", where)
				}
				if len(ls) == 1 {
					l := ls[0]
					if l.Reason == ReasonDropped {
						dropped++
					}
					b := behaviourOf(payload)
					switch l.Reason {
					case ReasonMaxAttempts:
						if b != failAlways || l.Attempts != 3 {
							t.Errorf("%s: out of attempts", where)
						}
					case ReasonPermanent:
						if b != failForGood || l.Attempts != 1 {
							t.Errorf("%s: permanent", where)
						}
					case ReasonDrainDeadline, ReasonDropped:
					default:
						t.Errorf("%s: unexpected reason", where)
					}
				}
				if isAsk {
					var want error
					switch {
					case done == 1 && len(ls) == 0:
						want = nil
					case ls[0].Reason == ReasonDropped:
						want = ErrDropped
					case ls[0].Reason == ReasonDrainDeadline:
						want = ErrClosed
					default:
						want = ls[0].Err
					}
					if (want == nil) != (errAsk == nil) || !errors.Is(errAsk, want) {
						t.Errorf("%s: Ask returned %v, want %v", where, errAsk, want)
					}
				}
			}
			t.Logf("%d offered: %d completed, %d dead-lettered (%d dropped, %d abandoned), %d refused; %+v",
				offered.Load(), completed, deadLettered, dropped, abandoned, refusedN, s)
			if s.Submitted != uint64(offered.Load()) || s.Completed != completed || s.DeadLettered != deadLettered ||
				s.Rejected != refusedN || s.Dropped != dropped {
				t.Errorf("Stats %+v disagree with what the tasks did", s)
			}
			if s.Submitted != s.Completed+s.DeadLettered+s.Rejected {
				t.Errorf("Submitted %d != Completed %d + DeadLettered %d + Rejected %d", s.Submitted, s.Completed, s.DeadLettered, s.Rejected)
			}
			if s.Queued != 0 || s.Retrying != 0 || s.Running != 0 || s.Blocked != 0 || s.Busy != 0 || s.Workers != 0 {
				t.Errorf("gauges after Close: %+v", s)
			}
			var de *DrainError
			if errors.As(closeErr, &de) && uint64(de.Abandoned) != abandoned {
				t.Errorf("Close reported %d abandoned, the letters %d", de.Abandoned, abandoned)
			}
		})
	}
}
