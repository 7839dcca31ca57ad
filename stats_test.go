package actorpool

import (
	"errors"
	"sync/atomic"
	"testing"
)

// TestAcquiresNeverDecrease checks that Stats.Acquires, a counter, never
// goes down: a take that claims an object and then finds it unusable
// bumps the slot's seq before it counts the hand-out as lending nothing,
// and a Stats read between the two must not be followed by a lower one.
// Prometheus would read the drop as a restart of the process.
func TestAcquiresNeverDecrease(t *testing.T) {
	var block atomic.Bool
	entered, proceed := make(chan struct{}), make(chan struct{})
	f := &factory{validate: func(c *conn) error {
		if block.CompareAndSwap(true, false) {
			close(entered)
			<-proceed
			return errors.New("stale")
		}
		return nil
	}}
	p := newPool(t, f, Config{MaxObjects: 1})
	release(t, acquire(t, p))

	block.Store(true)
	done := make(chan error, 1)
	go func() {
		l, err := p.TryAcquire()
		if err == nil {
			l.Release()
		}
		done <- err
	}()
	<-entered // the take claimed the object and is validating it
	during := p.Stats().Acquires
	close(proceed)
	if err := <-done; !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("TryAcquire of an object found stale = %v, want ErrWouldBlock", err)
	}
	if after := p.Stats().Acquires; after < during {
		t.Errorf("Acquires went from %d to %d: a counter must not go down", during, after)
	}
}
