package jsactor

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Close stops the actor: no task is fetched any more, running handlers go
// on until ctx ends, then their contexts are canceled with cause ErrClosed
// and they have Config.Grace to return; the tasks of those that have not
// are given back — copied to the ready subject, their attempt not charged
// — for another process to run. Tasks a pull request in flight brings
// after Close began are given back too. Close then adds this process's
// counters to the counter stream. It returns ctx's error when it had to
// give tasks back, and nil when every handler finished; later calls wait
// for the first and return its result.
func (a *Actor[T]) Close(ctx context.Context) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		<-a.closeDone
		return a.closeErr
	}
	a.closed = true
	a.mu.Unlock()
	err := a.close(ctx)
	a.closeErr = err
	close(a.closeDone)
	return err
}

func (a *Actor[T]) close(ctx context.Context) error {
	a.stop()
	a.stopTimers()
	done := make(chan struct{})
	go func() {
		a.workerWG.Wait() // the fetcher closes the queue once its request in flight ends
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		a.stopRun(ErrClosed)
		select {
		case <-done:
		case <-time.After(a.set.grace):
		}
		a.giveBackHeld()
	}
	// Not before: a handler that returns within Grace gives its task
	// back, which it can only while the lease holds, and a Grace may be
	// longer than a Lease (TestCloseGraceOutlastsLease).
	a.stopBeat()
	a.stopRun(ErrClosed)
	a.bgWG.Wait()
	flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	a.flushed.Store(true) // before the flush: a send that counts after it flushes its own counts
	if err := a.flush(flushCtx); err != nil {
		errs = append(errs, fmt.Errorf("jsactor: close %q: counters not added to the counter stream: %w", a.name, err))
	}
	if n := a.gaveBack.Load(); n > 0 && ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("jsactor: close %q: gave back %d tasks whose handlers had not finished: %w", a.name, n, context.Cause(ctx)))
	}
	return errors.Join(errs...)
}

// giveBackHeld gives back every task whose handler has not returned.
func (a *Actor[T]) giveBackHeld() {
	a.mu.Lock()
	hs := make([]*held, 0, len(a.held))
	for h := range a.held {
		hs = append(hs, h)
	}
	a.mu.Unlock()
	for _, h := range hs {
		if h.claim(heldGivenBack) {
			a.giveBack(h)
		}
	}
}
