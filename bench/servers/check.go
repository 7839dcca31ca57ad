package servers

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
)

// checkKey is the Redis key Check writes a fresh value to and reads back.
const checkKey = "actorpool:bench:check"

// Check runs a pool of c's against the server at addr, which Prepare must
// have prepared, and reports every way it broke the contract the
// benchmarks rely on: warming did not leave it with as many connections as
// asked; an operation failed or answered with the wrong value — another
// key's, another caller's — alone or with 32 goroutines sharing 4
// connections; a missing row or key was not reported as ErrNotFound; the
// pool held more connections than its size; Close failed.
func Check(ctx context.Context, c Contender, addr string) error {
	const (
		size       = 4
		goroutines = 32
		rounds     = 25
	)
	p, err := c.New(addr, size, nil)
	if err != nil {
		return fmt.Errorf("%s: New: %w", c.Name, err)
	}
	var errs []error
	fail := func(err error) { errs = append(errs, err) }
	if err := warmed(ctx, p, size); err != nil {
		fail(err)
	}

	var ops []func(ctx context.Context, key int) error
	for _, op := range Ops {
		if op.Server != c.Server {
			continue
		}
		f, err := op.bind(p)
		if err != nil {
			fail(err)
			continue
		}
		ops = append(ops, f)
	}
	for _, f := range ops {
		if err := f(ctx, KeySpace/2); err != nil {
			fail(err)
		}
	}
	if pg, ok := p.(PostgresPool); ok && c.Server == Postgres {
		if _, err := pg.Lookup(ctx, missingID); !errors.Is(err, ErrNotFound) {
			fail(fmt.Errorf("lookup of missing row %d: error %v, want one wrapping ErrNotFound", missingID, err))
		}
	}
	if rp, ok := p.(RedisPool); ok && c.Server == Redis {
		if _, err := rp.Get(ctx, missingKey); !errors.Is(err, ErrNotFound) {
			fail(fmt.Errorf("GET %s, a missing key: error %v, want one wrapping ErrNotFound", missingKey, err))
		}
		// Set writes what a key holds already: write something new, to
		// see that it is written.
		want := "check-" + strconv.FormatUint(rand.Uint64(), 36)
		if err := rp.Set(ctx, checkKey, want); err != nil {
			fail(fmt.Errorf("SET %s: %w", checkKey, err))
		} else if got, err := rp.Get(ctx, checkKey); err != nil || got != want {
			fail(fmt.Errorf("GET %s after SET %s %s: %q, %v", checkKey, checkKey, want, got, err))
		}
	}

	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		opErrs []error
		most   atomic.Int64
	)
	for i := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 1))
			for range rounds {
				for _, f := range ops {
					if err := f(ctx, r.IntN(KeySpace)); err != nil {
						mu.Lock()
						opErrs = append(opErrs, err)
						mu.Unlock()
						return
					}
				}
				for open := int64(p.Open()); ; {
					m := most.Load()
					if open <= m || most.CompareAndSwap(m, open) {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	if len(opErrs) > 0 {
		fail(fmt.Errorf("%d of %d goroutines sharing %d connections failed, the first with: %w", len(opErrs), goroutines, size, opErrs[0]))
	}
	if m := most.Load(); m > size {
		fail(fmt.Errorf("held %d connections at once; its size is %d", m, size))
	}
	if err := p.Close(); err != nil {
		fail(fmt.Errorf("Close: %w", err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", c.Name, errors.Join(errs...))
	}
	return nil
}
