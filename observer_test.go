package actorpool

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type recorder struct {
	mu                           sync.Mutex
	waits, holds, creates, tests []time.Duration
	waitErrs, createErrs         int
}

func (r *recorder) ObserveWait(d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, d)
	if err != nil {
		r.waitErrs++
	}
}

func (r *recorder) ObserveHold(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.holds = append(r.holds, d)
}

func (r *recorder) ObserveCreate(d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.creates = append(r.creates, d)
	if err != nil {
		r.createErrs++
	}
}

func (r *recorder) ObserveTest(d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tests = append(r.tests, d)
}

func TestObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{
			create: func(ctx context.Context, id int) error {
				time.Sleep(3 * time.Second)
				if id == 2 {
					return errors.New("refused")
				}
				return nil
			},
			test: func(ctx context.Context, c *conn) error {
				time.Sleep(time.Second)
				return nil
			},
		}
		r := &recorder{}
		p := newPool(t, f, Config{MaxObjects: 1, ValidationInterval: time.Minute, Observer: r})
		l := acquire(t, p) // waits 3s for create 1
		time.Sleep(5 * time.Second)
		release(t, l)
		l = acquire(t, p) // the idle one: no wait
		time.Sleep(2 * time.Second)
		if err := l.Destroy(); err != nil {
			t.Fatal(err)
		}
		_, err := p.Acquire(context.Background()) // create 2 fails after 3s
		if err == nil {
			t.Fatal("want create 2 to fail")
		}
		time.Sleep(time.Second) // past the backoff
		l = acquire(t, p)       // create 3, 3s
		release(t, l)
		time.Sleep(2 * time.Minute) // a test runs
		synctest.Wait()

		r.mu.Lock()
		defer r.mu.Unlock()
		want := func(name string, got []time.Duration, want ...time.Duration) {
			t.Helper()
			if len(got) != len(want) {
				t.Errorf("%s: %v, want %v", name, got, want)
				return
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s: %v, want %v", name, got, want)
					return
				}
			}
		}
		want("waits", r.waits, 3*time.Second, 3*time.Second, 3*time.Second)
		want("holds", r.holds, 5*time.Second, 2*time.Second, 0)
		want("creates", r.creates, 3*time.Second, 3*time.Second, 3*time.Second)
		if r.waitErrs != 1 || r.createErrs != 1 {
			t.Errorf("wait errors %d, create errors %d; want 1 and 1", r.waitErrs, r.createErrs)
		}
		if len(r.tests) == 0 || r.tests[0] != time.Second {
			t.Errorf("tests: %v, want 1s each", r.tests)
		}
	})
}
