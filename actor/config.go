package actor

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"
)

// Config shapes an actor. Its zero value is a complete configuration: one
// worker, an unbounded mailbox, one attempt per task with no timeout, a grace
// of one second at shutdown, failures logged and dead letters logged (at most
// ten a second) through slog.Default.
type Config[T any] struct {
	// Workers is the number of workers of a fixed actor; 0 means 1 unless
	// MaxWorkers is set.
	Workers int
	// MinWorkers and MaxWorkers make the actor elastic: it starts MinWorkers
	// workers, adds one, up to MaxWorkers, whenever a task waits while all
	// are busy, and lets a worker go after it has idled for KeepAlive, never
	// going below MinWorkers. MinWorkers may be 0.
	MinWorkers int
	MaxWorkers int
	// KeepAlive is how long an elastic actor keeps a worker above MinWorkers
	// idle before letting it go; 0 means one minute.
	KeepAlive time.Duration

	// Capacity bounds the mailbox; 0 means unbounded.
	Capacity int
	// Overflow decides what a send does when a bounded mailbox is full.
	Overflow Overflow

	// MaxAttempts is how many times a task is run before it goes to the dead
	// letters; 0 means 1, no retry.
	MaxAttempts int
	// Backoff spaces the attempts; it applies only when MaxAttempts > 1.
	Backoff Backoff
	// Timeout bounds each attempt: the handler's context ends after it.
	// 0 means no timeout.
	Timeout time.Duration

	// Grace is how long Close and Stop wait for running handlers after
	// cancelling their contexts, before dead-lettering their tasks and
	// returning; 0 means one second.
	Grace time.Duration

	// OnError receives every failed attempt. It runs on the worker, so it
	// should be quick. Nil logs each failure through Logger: a warning when
	// the task will be retried, an error when it will not.
	OnError func(err *TaskError)
	// DeadLetters receives the tasks the actor accepted but could not
	// complete. Nil logs them through Logger, at most ten a second.
	DeadLetters Sink[T]
	// DeadLetterRejected also hands the dead letters the tasks a send
	// refused with an error (ErrMailboxFull, ErrClosed, the end of the
	// sender's context), with ReasonRejected, for producers that fire and
	// forget. Such tasks still count as Rejected, not DeadLettered: the
	// sender was told.
	DeadLetterRejected bool

	// Logger receives the actor's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Overflow is what a send does when a bounded mailbox is full.
type Overflow uint8

const (
	// OverflowBlock makes Send wait for room, and TrySend fail with
	// ErrMailboxFull.
	OverflowBlock Overflow = iota
	// OverflowReject fails every send with ErrMailboxFull.
	OverflowReject
	// OverflowDropOldest dead-letters the task that has waited longest, with
	// ReasonDropped, to make room for the new one.
	OverflowDropOldest
	// OverflowDropNewest dead-letters the task being sent, with
	// ReasonDropped, and leaves the mailbox as it was.
	OverflowDropNewest
)

var overflowNames = [...]string{"block", "reject", "drop oldest", "drop newest"}

// String returns the policy's name, such as "drop oldest".
func (o Overflow) String() string {
	if int(o) < len(overflowNames) {
		return overflowNames[o]
	}
	return "Overflow(" + strconv.Itoa(int(o)) + ")"
}

// Backoff spaces the attempts of a failing task: the n-th retry waits
// Initial×Multiplierⁿ⁻¹, spread by ±Jitter of itself and capped at Max.
// Zero fields take their defaults.
type Backoff struct {
	Initial    time.Duration // delay before the first retry; 0 means 100ms
	Max        time.Duration // longest delay; 0 means 10s, or Initial if larger
	Multiplier float64       // growth per retry, ≥ 1; 0 means 2
	Jitter     float64       // spread in [0, 1] as a fraction of the delay; 0 means none
}

// Defaults, in one place so that the documentation above can be checked
// against them.
const (
	defaultKeepAlive  = time.Minute
	defaultGrace      = time.Second
	defaultInitial    = 100 * time.Millisecond
	defaultMaxDelay   = 10 * time.Second
	defaultMultiplier = 2
	defaultLogEvery   = 100 * time.Millisecond
	defaultLogBurst   = 10
)

// Validate reports every field that breaks a rule, as [*ConfigError] values
// joined with errors.Join; nil means the configuration is usable.
func (c *Config[T]) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Rule: fmt.Sprintf(format, args...)})
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Workers", c.Workers}, {"MinWorkers", c.MinWorkers}, {"MaxWorkers", c.MaxWorkers}, {"Capacity", c.Capacity}, {"MaxAttempts", c.MaxAttempts}} {
		if f.v < 0 {
			bad(f.name, "must be ≥ 0, got %d", f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"KeepAlive", c.KeepAlive}, {"Timeout", c.Timeout}, {"Grace", c.Grace}, {"Backoff.Initial", c.Backoff.Initial}, {"Backoff.Max", c.Backoff.Max}} {
		if f.v < 0 {
			bad(f.name, "must be ≥ 0, got %v", f.v)
		}
	}

	elastic := c.MinWorkers != 0 || c.MaxWorkers != 0
	switch {
	case c.Workers > 0 && elastic:
		bad("Workers", "set Workers for a fixed actor or MinWorkers and MaxWorkers for an elastic one, not both")
	case c.MinWorkers > 0 && c.MaxWorkers == 0:
		bad("MaxWorkers", "must be > 0 when MinWorkers is set (%d)", c.MinWorkers)
	case c.MaxWorkers > 0 && c.MinWorkers > c.MaxWorkers:
		bad("MinWorkers", "must be ≤ MaxWorkers (%d), got %d", c.MaxWorkers, c.MinWorkers)
	}
	if c.KeepAlive > 0 && c.MaxWorkers <= 0 {
		bad("KeepAlive", "applies only to an elastic actor (MaxWorkers > 0)")
	}

	if int(c.Overflow) >= len(overflowNames) {
		bad("Overflow", "unknown policy %v", c.Overflow)
	} else if c.Overflow != OverflowBlock && c.Capacity == 0 {
		bad("Overflow", "%q needs a bounded mailbox (Capacity > 0)", c.Overflow)
	}

	b := c.Backoff
	if b != (Backoff{}) && c.MaxAttempts <= 1 {
		bad("Backoff", "is set but MaxAttempts is %d, so no task is retried", c.MaxAttempts)
	}
	if b.Max > 0 && b.Initial > b.Max {
		bad("Backoff.Initial", "must be ≤ Backoff.Max (%v), got %v", b.Max, b.Initial)
	}
	if b.Multiplier != 0 && !(b.Multiplier >= 1) {
		bad("Backoff.Multiplier", "must be ≥ 1 (or 0 for 2), got %v", b.Multiplier)
	}
	if !(b.Jitter >= 0 && b.Jitter <= 1) {
		bad("Backoff.Jitter", "must be within [0, 1], got %v", b.Jitter)
	}
	return errors.Join(errs...)
}

// settings is a validated Config with the defaults filled in.
type settings struct {
	min, max           int
	keepAlive          time.Duration
	capacity           int
	overflow           Overflow
	maxAttempts        int
	backoff            Backoff
	timeout            time.Duration
	grace              time.Duration
	deadLetterRejected bool
}

func (c *Config[T]) settings() settings {
	s := settings{
		min:                c.Workers,
		max:                c.Workers,
		keepAlive:          c.KeepAlive,
		capacity:           c.Capacity,
		overflow:           c.Overflow,
		maxAttempts:        max(c.MaxAttempts, 1),
		backoff:            c.Backoff,
		timeout:            c.Timeout,
		grace:              c.Grace,
		deadLetterRejected: c.DeadLetterRejected,
	}
	if c.MaxWorkers > 0 {
		s.min, s.max = c.MinWorkers, c.MaxWorkers
		if s.keepAlive == 0 {
			s.keepAlive = defaultKeepAlive
		}
	} else if s.max == 0 {
		s.min, s.max = 1, 1
	}
	if s.grace == 0 {
		s.grace = defaultGrace
	}
	if s.maxAttempts > 1 {
		s.backoff = s.backoff.withDefaults()
	}
	return s
}
