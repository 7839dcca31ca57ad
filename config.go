package actorpool

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/actorpool/actorpool/internal/errs"
)

// Defaults for the Config fields whose zero value means "the default".
const (
	DefaultCreateTimeout = 30 * time.Second
	DefaultTestTimeout   = 5 * time.Second
)

// MaxObjectsLimit is the largest MaxObjects a pool accepts. A pool holds one
// fixed slot per object, so the bound keeps a typo from allocating gigabytes.
const MaxObjectsLimit = 1 << 20

// Config sets a pool's size, timeouts and housekeeping. The zero value of
// every field but MaxObjects is a sensible choice, so Config{MaxObjects: 8}
// is a complete configuration: objects are created on demand, reused
// last-in first-out, never evicted for age, and takers queue without limit
// until their context ends.
type Config struct {
	// Name identifies the pool in logs and errors. Zero means "actorpool".
	Name string

	// MaxObjects caps the objects alive at once, counting those being
	// created and those being destroyed. It must be at least 1.
	MaxObjects int

	// MinIdle is how many idle objects the pool keeps ready. When fewer are
	// idle it creates more, one at a time, up to MaxObjects. Zero keeps
	// none warm.
	MinIdle int

	// MinObjects is how many objects the pool keeps alive, idle or in
	// use. When fewer are, it creates more, one at a time; idle objects
	// are not evicted for idle time below it, though they still retire at
	// the end of their lifetime and are then replaced. Zero keeps none.
	MinObjects int

	// MaxIdleTime is how long an object may sit idle before it is
	// destroyed, unless that would leave fewer than MinIdle idle. Zero
	// means no limit.
	MaxIdleTime time.Duration

	// MaxLifetime is how long an object may live. Idle objects past it are
	// destroyed at once, objects in use when given back. Each object's
	// lifetime is shortened by a random amount of up to LifetimeJitter, so
	// objects created together do not all retire together. Zero means no
	// limit.
	MaxLifetime time.Duration

	// LifetimeJitter is the most by which an object's lifetime is
	// shortened, at random, below MaxLifetime. Zero means a tenth of
	// MaxLifetime. It must not exceed MaxLifetime.
	LifetimeJitter time.Duration

	// MaxQueueSize caps the takers waiting for an object. A take that would
	// exceed it fails at once with ErrPoolExhausted. Zero means no limit.
	MaxQueueSize int

	// CreateTimeout bounds each Factory.Create call. Zero means
	// DefaultCreateTimeout.
	CreateTimeout time.Duration

	// TestTimeout bounds each Factory.Test call: at the deadline the
	// object is destroyed and its place freed, even if Test ignores its
	// context — Destroy then runs beside Test (see Factory) — and what
	// Test returns later is ignored. Zero means DefaultTestTimeout.
	TestTimeout time.Duration

	// ValidationInterval is how often the pool tests idle objects with
	// Factory.Test. An object is tested when it has been idle, and
	// untested, for at least this long. Zero means never.
	ValidationInterval time.Duration

	// LeakThreshold is how long a lease may be held before the pool logs it,
	// once, as a suspected leak. Zero means never. Leases dropped without
	// being given back are found by the garbage collector whatever this is.
	LeakThreshold time.Duration

	// TraceAcquires records the stack of every take, so that leak reports
	// say where the lease was acquired. It costs a stack walk per take.
	TraceAcquires bool

	// HandoffAfter chooses between strict and bounded fairness when takers
	// wait. Zero, the default, hands every object given back to the
	// oldest waiter at once, strict first come, first served; a holder
	// that had waited for its object and gives it back within a few
	// microseconds also yields its processor to that waiter, so that a
	// line of waiters with short holds drains rather than every giver
	// queueing behind the waiter it served. A positive duration lets a
	// running goroutine take an object given back ahead of the waiters,
	// as sync.Mutex lets a running goroutine take the lock, and hands
	// objects straight to the oldest waiter only once it has waited this
	// long; no waiter is passed over for much longer than HandoffAfter.
	// With the strict default's yield, the two measure level in the
	// benchmarks (docs/benchmarks.md), and the strict order costs no
	// throughput there.
	HandoffAfter time.Duration

	// FIFO reuses the object idle the longest first, spreading use over
	// every object. The default, last-in first-out, reuses the most
	// recently given back, so that surplus objects go idle and age out.
	// On many cores the order is kept per shard (a few per processor),
	// so that a goroutine that takes and gives back in a loop reuses its
	// own object.
	FIFO bool

	// Logger receives the pool's events: leaks, failed creates and tests,
	// panics in the factory. Nil means slog.Default().
	Logger *slog.Logger

	// Observer, if set, is told how long waits, holds, creates and tests
	// take, for metrics.
	Observer Observer
}

// A ConfigError names a Config field whose value breaks a rule, the value,
// and what is allowed: Field, such as "MaxObjects"; Value, what it has;
// Rule, such as "must be between 1 and 1048576". Its message reads
// "actorpool: Config.MaxObjects is 0: must be between 1 and 1048576". It is
// the same type as actor.ConfigError, and the adapters report their own
// fields with it.
type ConfigError = errs.ConfigError

// Validate reports every field that breaks a rule, as *ConfigError values
// joined with errors.Join, or nil when c is usable. It has a value
// receiver, as actor.Config's has, so that it can be called on any Config,
// a literal or a copy included.
func (c Config) Validate() error {
	check := errs.NewChecker("actorpool")
	if c.MaxObjects < 1 || c.MaxObjects > MaxObjectsLimit {
		check.Bad("MaxObjects", c.MaxObjects, fmt.Sprintf("must be between 1 and %d", MaxObjectsLimit))
	}
	errs.NotNegative(check, "MinIdle", c.MinIdle, "none kept idle")
	if c.MaxObjects >= 1 && c.MinIdle > c.MaxObjects {
		check.Bad("MinIdle", c.MinIdle, fmt.Sprintf("must not exceed MaxObjects (%d)", c.MaxObjects))
	}
	errs.NotNegative(check, "MinObjects", c.MinObjects, "none kept alive")
	if c.MaxObjects >= 1 && c.MinObjects > c.MaxObjects {
		check.Bad("MinObjects", c.MinObjects, fmt.Sprintf("must not exceed MaxObjects (%d)", c.MaxObjects))
	}
	errs.NotNegative(check, "MaxQueueSize", c.MaxQueueSize, "no limit")
	errs.NotNegative(check, "MaxIdleTime", c.MaxIdleTime, "no limit")
	errs.NotNegative(check, "MaxLifetime", c.MaxLifetime, "no limit")
	errs.NotNegative(check, "LifetimeJitter", c.LifetimeJitter, "a tenth of MaxLifetime")
	if c.LifetimeJitter > 0 && c.LifetimeJitter > c.MaxLifetime {
		check.Bad("LifetimeJitter", c.LifetimeJitter, fmt.Sprintf("must not exceed MaxLifetime (%v)", c.MaxLifetime))
	}
	errs.NotNegative(check, "CreateTimeout", c.CreateTimeout, "the default, "+DefaultCreateTimeout.String())
	errs.NotNegative(check, "TestTimeout", c.TestTimeout, "the default, "+DefaultTestTimeout.String())
	errs.NotNegative(check, "ValidationInterval", c.ValidationInterval, "never")
	errs.NotNegative(check, "LeakThreshold", c.LeakThreshold, "never")
	errs.NotNegative(check, "HandoffAfter", c.HandoffAfter, "strict first come, first served")
	return check.Err()
}

// withDefaults returns c with the zero values that mean "the default"
// replaced by it.
func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = "actorpool"
	}
	if c.CreateTimeout == 0 {
		c.CreateTimeout = DefaultCreateTimeout
	}
	if c.TestTimeout == 0 {
		c.TestTimeout = DefaultTestTimeout
	}
	if c.LifetimeJitter == 0 {
		c.LifetimeJitter = c.MaxLifetime / 10
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
