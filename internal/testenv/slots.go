package testenv

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
)

// CheckNoSlotLost fails t unless, once a load has stopped, nothing is held
// or waited for, and MaxObjects takes at once all succeed: every slot of
// the pool can still hold a working object. take takes one object and
// returns what gives it back.
func CheckNoSlotLost(t testing.TB, stats func() actorpool.Stats, take func(ctx context.Context) (release func(), err error)) {
	t.Helper()
	// A give-back that destroys reports to the pool's keeper; wait for it.
	Eventually(t, 10*time.Second, "nothing in use or waiting", func() bool {
		st := stats()
		return st.InUse == 0 && st.Waiting == 0
	})
	n := stats().MaxObjects
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		releases []func()
		errs     []error
	)
	for range n {
		wg.Go(func() {
			release, err := take(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			releases = append(releases, release)
		})
	}
	wg.Wait()
	for _, r := range releases {
		r()
	}
	if len(errs) > 0 {
		t.Errorf("%d of %d takes at once failed, a slot is lost or broken: %v (%+v)", len(errs), n, errs[0], stats())
	}
}
