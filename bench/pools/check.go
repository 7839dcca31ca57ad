package pools

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Check runs a pool of c's through a contended workload and reports every
// way it broke the contract the benchmarks rely on: a take that failed, an
// object lent to two holders at once or lent after it was destroyed, more
// objects alive than the pool's size, an object destroyed twice, and, after
// Close, an object that was never destroyed — not given back, or lost.
// A pool that caps nothing (Contender.Unbounded) is not held to its size
// nor to destroying what it made.
func Check(ctx context.Context, c Contender) error {
	const (
		size       = 4
		goroutines = 32
		rounds     = 200
	)
	f := &Factory{}
	p, err := c.New(Config{Size: size, Factory: f})
	if err != nil {
		return fmt.Errorf("%s: New: %w", c.Name, err)
	}
	var (
		twice, destroyed, nils atomic.Int64
		mu                     sync.Mutex
		doErrs                 []error
		wg                     sync.WaitGroup
	)
	hold := func(o *Object) {
		if o == nil {
			nils.Add(1)
			return
		}
		if o.holders.Add(1) != 1 {
			twice.Add(1)
		}
		if o.destroyed.Load() {
			destroyed.Add(1)
		}
		runtime.Gosched() // let another taker in while this one holds
		o.holders.Add(-1)
	}
	for range goroutines {
		wg.Go(func() {
			for range rounds {
				if err := p.Do(ctx, hold); err != nil {
					mu.Lock()
					doErrs = append(doErrs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	closeErr := p.Close()

	var errs []error
	if len(doErrs) > 0 {
		errs = append(errs, fmt.Errorf("%d takes failed, the first with: %w", len(doErrs), doErrs[0]))
	}
	if closeErr != nil {
		errs = append(errs, fmt.Errorf("Close: %w", closeErr))
	}
	if n := nils.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("lent a nil object %d times", n))
	}
	if n := twice.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("lent an object already held %d times", n))
	}
	if n := destroyed.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("lent a destroyed object %d times", n))
	}
	if n := f.doubleDestroys.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("destroyed %d objects twice", n))
	}
	if !c.Unbounded {
		if n := f.MaxAlive(); n > size {
			errs = append(errs, fmt.Errorf("had %d objects alive at once; the size is %d", n, size))
		}
		if made, gone := f.Created(), f.Destroyed(); made != gone {
			errs = append(errs, fmt.Errorf("created %d objects but destroyed %d by the end of Close", made, gone))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	return nil
}
