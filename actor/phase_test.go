package actor

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestPhaseMoves drives actors through every move of phaseMoves — a Close
// that drains, a Stop whose handler returns within the grace, a Stop whose
// handler outlives it — and checks, for each, the moves made and the
// channels closed, and that together they make every move the table lists
// and no other. A move the table does not list panics in enterLocked,
// failing the test.
func TestPhaseMoves(t *testing.T) {
	noLeaks(t)
	type move struct{ from, to phase }
	cases := []struct {
		name string
		// shut sends to a (whose handler returns when its task's context
		// ends, or on release for payload 2) and closes it.
		shut      func(t *testing.T, a *Actor[int], release chan struct{})
		moves     []move
		announced []phase // the phases whose channels are closed at the end
	}{{
		name: "Close drains",
		shut: func(t *testing.T, a *Actor[int], _ chan struct{}) {
			a.Send(t.Context(), 1)
			if err := a.Close(t.Context()); err != nil {
				t.Errorf("Close = %v", err)
			}
		},
		moves:     []move{{phaseOpen, phaseDraining}, {phaseDraining, phaseDrained}, {phaseDrained, phaseClosed}},
		announced: []phase{phaseDrained, phaseClosed},
	}, {
		name: "Stop, handler returns within the grace",
		shut: func(t *testing.T, a *Actor[int], _ chan struct{}) {
			a.Send(t.Context(), 0)
			synctest.Wait()
			var de *DrainError
			if err := a.Stop(); !errors.As(err, &de) || de.InFlight != 1 || de.Abandoned != 0 {
				t.Errorf("Stop = %v, want a DrainError with one task in flight, none abandoned", err)
			}
		},
		moves:     []move{{phaseOpen, phaseDraining}, {phaseDraining, phaseHalted}, {phaseHalted, phaseDrained}, {phaseDrained, phaseClosed}},
		announced: []phase{phaseHalted, phaseDrained, phaseClosed},
	}, {
		name: "Stop, handler outlives the grace",
		shut: func(t *testing.T, a *Actor[int], release chan struct{}) {
			a.Send(t.Context(), 2)
			synctest.Wait()
			var de *DrainError
			if err := a.Stop(); !errors.As(err, &de) || de.Abandoned != 1 {
				t.Errorf("Stop = %v, want a DrainError with one handler abandoned", err)
			}
			close(release)
			synctest.Wait() // the abandoned worker leaves a closed actor
		},
		moves:     []move{{phaseOpen, phaseDraining}, {phaseDraining, phaseHalted}, {phaseHalted, phaseClosed}},
		announced: []phase{phaseHalted, phaseClosed},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				a, err := New("phases", func(ctx context.Context, task Task[int]) error {
					switch task.Payload {
					case 0:
						<-ctx.Done()
						return ctx.Err()
					case 2:
						<-release // ignores its context, past the grace
					}
					return nil
				}, Config[int]{Workers: 1, Grace: time.Second, OnError: func(*TaskError) {}, Logger: testLogger(t)})
				if err != nil {
					t.Fatal(err)
				}
				tc.shut(t, a, release)
				a.Stop() // a halt after the close changes nothing

				a.mu.Lock()
				defer a.mu.Unlock()
				want := map[move]bool{}
				for _, m := range tc.moves {
					want[m] = true
				}
				for from := range phases {
					for to := range phases {
						if n, m := a.phaseMoves[from][to], (move{from, to}); want[m] && n != 1 {
							t.Errorf("%v → %v made %d times, want once", from, to, n)
						} else if !want[m] && n > 0 {
							t.Errorf("%v → %v made %d times, want never", from, to, n)
						}
					}
				}
				if a.phase != phaseClosed {
					t.Errorf("the phase is %v after Close, want closed", a.phase)
				}
				channels := map[phase]chan struct{}{phaseDrained: a.drained, phaseHalted: a.halted, phaseClosed: a.closed}
				for p, ch := range channels {
					announced := false
					select {
					case <-ch:
						announced = true
					default:
					}
					if wantAnnounced := slices.Contains(tc.announced, p); announced != wantAnnounced {
						t.Errorf("the channel of phase %v closed: %v, want %v", p, announced, wantAnnounced)
					}
				}
			})
		})
	}

	// Together, the cases make every move the table lists.
	made := map[move]bool{}
	for _, tc := range cases {
		for _, m := range tc.moves {
			made[m] = true
		}
	}
	for from := range phases {
		for to := range phases {
			if phaseMoves[from]&(1<<to) != 0 && !made[move{from, to}] {
				t.Errorf("no case makes the move %v → %v, which the table lists", from, to)
			}
		}
	}
}

// TestPhaseMoveNotListedPanics checks that enterLocked refuses a move that
// the table does not list, and leaves the phase as it was.
func TestPhaseMoveNotListedPanics(t *testing.T) {
	a := &Actor[int]{name: "x", phase: phaseDrained}
	defer func() {
		v := recover()
		if err, ok := v.(error); !ok || !strings.Contains(err.Error(), "the shutdown of x cannot move from drained to halted") {
			t.Errorf("enterLocked(drained → halted) panicked with %v, want a refusal", v)
		}
		if a.phase != phaseDrained {
			t.Errorf("a refused move changed the phase to %v", a.phase)
		}
	}()
	a.enterLocked(phaseHalted)
}
