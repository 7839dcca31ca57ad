package leakcheck

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
)

// recorder is a testing.TB that keeps what a check reports instead of
// failing the test that runs the check.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, format)
}

func (r *recorder) failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errors) > 0
}

// runningBefore and startedAfter say they run, then run until stop is
// closed; their names tell their goroutines apart in a stack dump.
func runningBefore(running chan<- struct{}, stop <-chan struct{}) {
	close(running)
	<-stop
}

func startedAfter(running chan<- struct{}, stop <-chan struct{}) {
	close(running)
	<-stop
}

// start runs f on a goroutine and returns once f runs, with a func that
// stops f and waits for its goroutine to end.
func start(f func(running chan<- struct{}, stop <-chan struct{})) (end func()) {
	running, stop, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		f(running, stop)
	}()
	<-running
	return func() {
		close(stop)
		<-done
	}
}

// TestStartedSeesNewGoroutines checks that a snapshot tells a goroutine
// started after it from one running before it, and leaves out the caller.
func TestStartedSeesNewGoroutines(t *testing.T) {
	defer start(runningBefore)()
	s := Take()
	if left := s.Started(); len(left) != 0 {
		t.Fatalf("a snapshot just taken sees %d goroutines started since:\n\n%s", len(left), strings.Join(left, "\n\n"))
	}
	defer start(startedAfter)()
	left := s.Started()
	if len(left) != 1 || !strings.Contains(left[0], "startedAfter") {
		t.Fatalf("Started = %d goroutines, want the one started after the snapshot:\n\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// TestCheckFailsOnGoroutineLeft checks that a check fails while a goroutine
// started since its snapshot runs, and passes once it has ended.
func TestCheckFailsOnGoroutineLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := Take()
		end := start(startedAfter)
		// The goroutine never ends by itself; in the bubble, the check's
		// wait passes at once.
		r := &recorder{TB: t}
		s.Check(r)
		if !r.failed() {
			t.Error("Check passed with a goroutine left running")
		}
		end()
		r = &recorder{TB: t}
		s.Check(r)
		if r.failed() {
			t.Errorf("Check failed once the goroutine had ended: %v", r.errors)
		}
	})
}

// TestCheckWaitsForGoroutineEnding checks that a check passes when the
// goroutine left was told to end and has yet to return.
func TestCheckWaitsForGoroutineEnding(t *testing.T) {
	Check(t)
	s := Take()
	running, stop := make(chan struct{}), make(chan struct{})
	go startedAfter(running, stop)
	close(stop)
	r := &recorder{TB: t}
	s.Check(r)
	if r.failed() {
		t.Errorf("Check failed on a goroutine on its way out: %v", r.errors)
	}
}

// TestBubble checks that Bubble sees the goroutines in the caller's
// synctest bubble, other than the caller, and none outside it.
func TestBubble(t *testing.T) {
	defer start(runningBefore)()
	synctest.Test(t, func(t *testing.T) {
		before := Bubble()
		end := start(startedAfter)
		defer end()
		in := Bubble()
		count := func(in []string, frame string) (n int) {
			for _, g := range in {
				if strings.Contains(g, frame) {
					n++
				}
			}
			return n
		}
		// The goroutines of package synctest that run the bubble are in
		// it too.
		if len(in) != len(before)+1 || count(in, "startedAfter") != 1 || count(in, "runningBefore") != 0 || count(in, "leakcheck.Bubble()") != 0 {
			t.Fatalf("Bubble = %d goroutines, want the %d of synctest and the one started in the bubble, not the caller:\n\n%s",
				len(in), len(before), strings.Join(in, "\n\n"))
		}
	})
	defer func() {
		if recover() == nil {
			t.Error("Bubble outside a bubble did not panic")
		}
	}()
	Bubble()
}
