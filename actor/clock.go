package actor

import (
	"sync"
	"sync/atomic"
	"time"
)

// clockTick is how often a running clock refreshes its reading, and so
// about the most that a reading lags the time; it lags more only when the
// machine is so busy that the refresh runs late.
const clockTick = time.Millisecond

// Clock states.
const (
	clockStopped = iota // no tick is scheduled: the reading may be old
	clockUnread         // a tick is scheduled; no one has read since the last
	clockRead           // a tick is scheduled; someone has read since the last
)

// A clock stamps tasks as they are queued. Reading the system clock costs
// more than the rest of a send, so the clock keeps a reading that a timer
// refreshes every clockTick for as long as someone reads it. A tick that
// finds the clock unread since the last one stops the timer, and the next
// reading comes from the system clock and starts it again: an idle actor
// costs nothing, and the first task after a pause is stamped exactly.
//
// A reading is thus never later than the time and at most about a tick
// earlier. Readings are durations since the clock's epoch, measured on the
// monotonic clock: small to store in a task, and safe to compare and
// subtract; at converts one to a time.Time.
type clock struct {
	epoch time.Time    // the origin of every reading
	nanos atomic.Int64 // the reading, as time since epoch
	state atomic.Uint32

	timer  *time.Timer   // runs tick
	mu     sync.Mutex    // guards armed and closed, and moves state out of and into stopped
	armed  bool          // a tick is scheduled or running
	closed bool          // stop was called: no tick is scheduled again
	done   chan struct{} // closed by a tick that runs after stop, which stop waits for
}

func newClock() *clock {
	c := &clock{epoch: time.Now(), done: make(chan struct{})}
	// The timer is made now, by the goroutine that makes the actor, rather
	// than by the first send: testing/synctest ties a timer, a channel or a
	// WaitGroup to the bubble of the goroutine that made it, as it ties the
	// actor's workers, and crashes a program that uses one from outside.
	c.timer = time.AfterFunc(time.Hour, c.tick)
	c.timer.Stop()
	return c
}

// at returns the time of a reading.
func (c *clock) at(d time.Duration) time.Time { return c.epoch.Add(d) }

// exact returns a reading of the system clock.
func (c *clock) exact() time.Duration { return time.Since(c.epoch) }

// now returns the clock's reading, starting the clock if it is stopped.
func (c *clock) now() time.Duration {
	for {
		switch c.state.Load() {
		case clockRead:
			return time.Duration(c.nanos.Load())
		case clockUnread:
			// A compare-and-swap, not a store, so as not to undo a tick
			// that stops the clock meanwhile.
			if c.state.CompareAndSwap(clockUnread, clockRead) {
				return time.Duration(c.nanos.Load())
			}
		default:
			return c.start()
		}
	}
}

// start takes a reading from the system clock and, unless the clock runs
// already or was stopped for good, schedules the first tick.
func (c *clock) start() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.exact()
	if c.closed || c.state.Load() != clockStopped {
		return d
	}
	c.nanos.Store(int64(d))
	c.state.Store(clockRead)
	if !c.armed {
		c.armed = true
		c.timer.Reset(clockTick)
	}
	return d
}

// tick refreshes the reading, and schedules the next tick if the clock was
// read since the last, or else stops it.
func (c *clock) tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		close(c.done)
		return
	}
	c.nanos.Store(int64(c.exact()))
	for {
		// Readers may turn unread into read meanwhile, but nothing else
		// changes the state while c.mu is held.
		switch c.state.Load() {
		case clockRead:
			if c.state.CompareAndSwap(clockRead, clockUnread) {
				c.timer.Reset(clockTick)
				return
			}
		case clockUnread:
			if c.state.CompareAndSwap(clockUnread, clockStopped) {
				c.armed = false
				return
			}
		default:
			c.armed = false
			return
		}
	}
}

// stop stops the clock for good and waits for a tick in progress, so that
// no goroutine of the clock is left. Readings after stop come from the
// system clock.
func (c *clock) stop() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.state.Store(clockStopped)
	running := c.armed && !c.timer.Stop()
	c.armed = false
	c.mu.Unlock()
	if running {
		<-c.done
	}
}
