package actor

import (
	"cmp"
	"slices"
	"time"
)

// delay returns how long to wait after the given failed attempt (from 1),
// with r drawn uniformly from [0, 1) to spread the jitter.
func (b Backoff) delay(attempt int, r float64) time.Duration {
	d := float64(b.Initial)
	for range attempt - 1 {
		d *= b.Multiplier
		if d >= float64(b.Max) {
			break
		}
	}
	d *= 1 + b.Jitter*(2*r-1)
	// Compared as floats, a Max near the longest duration rounds up to
	// 2⁶³, which does not convert back: cap with Max itself.
	if !(d < float64(b.Max)) {
		return b.Max
	}
	return time.Duration(d)
}

// A retry is a failed task waiting for its backoff. It waits on a timer, not
// on a worker.
type retry[T any] struct {
	a     *Actor[T]
	env   envelope[T] // env.x is &x
	x     extras
	timer *time.Timer // nil until startRetry
}

// retryLocked registers env, whose last attempt failed with err, as waiting
// for a retry; startRetry starts its backoff.
func (a *Actor[T]) retryLocked(env envelope[T], err error) *retry[T] {
	r := &retry[T]{a: a, env: env}
	if env.x != nil {
		r.x = *env.x
	}
	r.x.history = history{attempt: env.attempt(), err: err}
	r.env.x = &r.x
	a.retries[r] = struct{}{}
	return r
}

// startRetry puts r back in line after d, unless halt took it meanwhile.
func (a *Actor[T]) startRetry(r *retry[T], d time.Duration) {
	a.mu.Lock()
	if _, ok := a.retries[r]; ok {
		r.timer = time.AfterFunc(d, r.fire)
	}
	a.mu.Unlock()
}

// fire moves a retry whose backoff has passed to a worker, or to the ready
// queue ahead of the mailbox. A retry that halt took already is left alone.
func (r *retry[T]) fire() {
	a := r.a
	a.mu.Lock()
	if _, ok := a.retries[r]; !ok {
		a.mu.Unlock()
		return
	}
	delete(a.retries, r)
	r.x.attempt++
	r.x.ready = a.clock.now()
	w := a.handOffLocked(&r.env)
	if w == nil {
		a.ready.push(&r.env)
		a.growLocked()
	}
	a.mu.Unlock()
	if w != nil {
		w.wake <- true
	}
}

// takeRetriesLocked stops every waiting retry and returns their tasks in
// the order they were submitted.
func (a *Actor[T]) takeRetriesLocked() []envelope[T] {
	envs := make([]envelope[T], 0, len(a.retries))
	for r := range a.retries {
		if r.timer != nil {
			r.timer.Stop()
		}
		envs = append(envs, r.env)
	}
	clear(a.retries)
	slices.SortFunc(envs, func(x, y envelope[T]) int { return cmp.Compare(x.id, y.id) })
	return envs
}
