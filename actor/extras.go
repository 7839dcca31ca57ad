package actor

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"
)

// Extras are what few tasks carry, kept out of the envelope so that the
// envelopes of the others stay small: the type named with WithType, the
// channel where Ask waits, and the history of a task that failed. The
// envelopes of the tasks of one type share the extras that name it, which
// no one changes; a task sent with Ask, and a task that failed, has its own.
type extras struct {
	typ     string     // the type named with WithType; "" for the actor's default
	reply   chan error // where Ask waits for the outcome; nil for the other sends
	history            // zero before the task's first failure
}

// A history is what a failed task carries to its next attempt.
type history struct {
	attempt int           // Task.Attempt: the failed attempt, then, once the backoff has passed, the next
	err     error         // the error of the failed attempt
	ready   time.Duration // when the backoff passed and the task was queued again, as a reading of the actor's clock
}

// maxTypes is how many type names an actor keeps extras for; see WithType.
const maxTypes = 256

// A typeCache holds the extras of each type name sent with WithType, so that
// such a send shares them rather than allocating its own. Sends read the map
// without a lock: it is replaced, never changed.
type typeCache struct {
	m  atomic.Pointer[map[string]*extras]
	mu sync.Mutex // serializes replacements
}

// extras returns the extras that name typ, which is not empty.
func (c *typeCache) extras(typ string) *extras {
	if m := c.m.Load(); m != nil {
		if x := (*m)[typ]; x != nil {
			return x
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var old map[string]*extras
	if p := c.m.Load(); p != nil {
		old = *p
	}
	if x := old[typ]; x != nil {
		return x
	}
	x := &extras{typ: typ}
	if len(old) >= maxTypes {
		return x
	}
	m := make(map[string]*extras, len(old)+1)
	maps.Copy(m, old)
	m[typ] = x
	c.m.Store(&m)
	return x
}
