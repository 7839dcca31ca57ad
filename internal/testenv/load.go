package testenv

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Grace is how long past its deadline a call under load may return before
// it counts as late. It is a bound for a stuck call, not a measure of
// speed: a call that honours its context returns far sooner.
const Grace = 2 * time.Second

// A Load calls a function from many goroutines in a loop, each call under a
// deadline of its own, and records what the calls returned and whether any
// outlived its deadline by more than Grace.
type Load struct {
	timeout time.Duration
	fn      func(ctx context.Context) error
	stop    chan struct{}
	wg      sync.WaitGroup

	calls, errs, late atomic.Int64
	lastOK            []atomic.Int64 // per worker: when its latest successful call began, unix ns

	mu      sync.Mutex
	samples map[string]int // error messages, counted, for the report
}

// StartLoad starts workers goroutines that call fn until Stop, each call
// with a context that ends after timeout.
func StartLoad(t testing.TB, workers int, timeout time.Duration, fn func(ctx context.Context) error) *Load {
	l := &Load{
		timeout: timeout, fn: fn, stop: make(chan struct{}),
		lastOK: make([]atomic.Int64, workers), samples: make(map[string]int),
	}
	l.wg.Add(workers)
	for i := range workers {
		go l.work(i)
	}
	t.Cleanup(l.Stop)
	return l
}

func (l *Load) work(i int) {
	defer l.wg.Done()
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
		err := l.fn(ctx)
		cancel()
		l.calls.Add(1)
		if time.Since(start) > l.timeout+Grace {
			l.late.Add(1)
		}
		if err == nil {
			l.lastOK[i].Store(start.UnixNano())
			continue
		}
		l.errs.Add(1)
		l.mu.Lock()
		if len(l.samples) < 5 {
			l.samples[err.Error()]++
		}
		l.mu.Unlock()
		// A failing call can fail at once (a refused connect): pause so
		// the workers do not spin on a 2-core machine.
		select {
		case <-l.stop:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Stop ends the load and waits for its goroutines. It may be called more
// than once.
func (l *Load) Stop() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// WaitAllSucceed waits until every worker has made a successful call that
// began after WaitAllSucceed was called, and fails t if that does not
// happen within limit.
func (l *Load) WaitAllSucceed(t testing.TB, limit time.Duration) {
	t.Helper()
	mark := time.Now().UnixNano()
	Eventually(t, limit, "every worker to succeed ("+l.String()+")", func() bool {
		for i := range l.lastOK {
			if l.lastOK[i].Load() <= mark {
				return false
			}
		}
		return true
	})
}

// WaitErrors waits until a call fails, and fails t if none does within
// limit.
func (l *Load) WaitErrors(t testing.TB, limit time.Duration) {
	t.Helper()
	n := l.errs.Load()
	Eventually(t, limit, "a call to fail", func() bool { return l.errs.Load() > n })
}

// Restart stops the server under the load with stop, waits up to down for
// a call to fail, starts the server again with start, and waits up to up
// for every worker to succeed again; then it stops the load and checks it.
func (l *Load) Restart(t testing.TB, stop, start func(), down, up time.Duration) {
	t.Helper()
	stop()
	l.WaitErrors(t, down)
	start()
	l.WaitAllSucceed(t, up)
	l.Stop()
	l.Check(t)
}

// Check fails t if a call outlived its deadline by more than Grace.
func (l *Load) Check(t testing.TB) {
	t.Helper()
	if n := l.late.Load(); n > 0 {
		t.Errorf("%d calls returned more than %v after their %v deadline (%s)", n, Grace, l.timeout, l)
	}
	t.Logf("load: %s", l)
}

// String summarises the calls made so far.
func (l *Load) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("%d calls, %d errors, %d late; errors seen: %v", l.calls.Load(), l.errs.Load(), l.late.Load(), l.samples)
}
