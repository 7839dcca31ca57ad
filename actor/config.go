package actor

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/actorpool/actorpool/internal/errs"
)

// CapacityLimit is the largest Capacity, and WorkersLimit the largest
// Workers, MinWorkers and MaxWorkers, that an actor accepts: New allocates
// a bounded mailbox whole and starts its workers at once, so the bounds
// keep a typo from allocating gigabytes or crashing New.
const (
	CapacityLimit = 1 << 24
	WorkersLimit  = 1 << 20
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
// joined with errors.Join; nil means the configuration is usable. It has a
// value receiver, as actorpool.Config's has, so that it can be called on
// any Config, a literal or a copy included.
func (c Config[T]) Validate() error {
	check := errs.NewChecker("actor")
	errs.NotNegative(check, "Workers", c.Workers, "one, unless MaxWorkers is set")
	errs.NotNegative(check, "MinWorkers", c.MinWorkers, "no worker is kept when idle")
	errs.NotNegative(check, "MaxWorkers", c.MaxWorkers, "a fixed actor")
	errs.NotNegative(check, "Capacity", c.Capacity, "unbounded")
	errs.NotNegative(check, "MaxAttempts", c.MaxAttempts, "one")
	errs.NotNegative(check, "KeepAlive", c.KeepAlive, "the default, "+defaultKeepAlive.String())
	errs.NotNegative(check, "Timeout", c.Timeout, "no timeout")
	errs.NotNegative(check, "Grace", c.Grace, "the default, "+defaultGrace.String())
	errs.NotNegative(check, "Backoff.Initial", c.Backoff.Initial, "the default, "+defaultInitial.String())
	errs.NotNegative(check, "Backoff.Max", c.Backoff.Max, "the default, "+defaultMaxDelay.String())
	for _, f := range []struct {
		field string
		v     int
	}{{"Workers", c.Workers}, {"MinWorkers", c.MinWorkers}, {"MaxWorkers", c.MaxWorkers}} {
		if f.v > WorkersLimit {
			check.Bad(f.field, f.v, fmt.Sprintf("must not exceed %d: the workers are goroutines, started as they are needed", WorkersLimit))
		}
	}
	if c.Capacity > CapacityLimit {
		check.Bad("Capacity", c.Capacity, fmt.Sprintf("must not exceed %d: a bounded mailbox is allocated whole when the actor starts (zero means unbounded)", CapacityLimit))
	}

	elastic := c.MinWorkers != 0 || c.MaxWorkers != 0
	switch {
	case c.Workers > 0 && elastic:
		check.Bad("Workers", c.Workers, "must not be set with MinWorkers or MaxWorkers: set Workers for a fixed actor, or MinWorkers and MaxWorkers for an elastic one, not both")
	case c.MinWorkers > 0 && c.MaxWorkers == 0:
		check.Bad("MaxWorkers", c.MaxWorkers, fmt.Sprintf("must be at least 1 when MinWorkers is set (%d)", c.MinWorkers))
	case c.MaxWorkers > 0 && c.MinWorkers > c.MaxWorkers:
		check.Bad("MinWorkers", c.MinWorkers, fmt.Sprintf("must not exceed MaxWorkers (%d)", c.MaxWorkers))
	}
	if c.KeepAlive > 0 && c.MaxWorkers <= 0 {
		check.Bad("KeepAlive", c.KeepAlive, "must be zero unless the actor is elastic (MaxWorkers set): it applies to elastic actors only")
	}

	if int(c.Overflow) >= len(overflowNames) {
		check.Bad("Overflow", c.Overflow, "must be one of "+strings.Join(overflowNames[:], ", ")+": the policy is unknown")
	} else if c.Overflow != OverflowBlock && c.Capacity == 0 {
		check.Bad("Overflow", c.Overflow, fmt.Sprintf("must be %s when Capacity is zero: the other policies need a bounded mailbox", OverflowBlock))
	}

	b := c.Backoff
	if b != (Backoff{}) && c.MaxAttempts <= 1 {
		check.Bad("Backoff", b, fmt.Sprintf("must be zero unless MaxAttempts is more than 1 (it is %d): no task is retried", c.MaxAttempts))
	}
	if b.Max > 0 && b.Initial > b.Max {
		check.Bad("Backoff.Initial", b.Initial, fmt.Sprintf("must not exceed Backoff.Max (%v)", b.Max))
	}
	if b.Multiplier != 0 && !(b.Multiplier >= 1) {
		check.Bad("Backoff.Multiplier", b.Multiplier, fmt.Sprintf("must be at least 1 (zero means the default, %v)", defaultMultiplier))
	}
	if !(b.Jitter >= 0 && b.Jitter <= 1) {
		check.Bad("Backoff.Jitter", b.Jitter, "must be between 0 and 1")
	}
	return check.Err()
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

func (c Config[T]) settings() settings {
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
