package pgactor

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/errs"
)

// Config shapes a durable actor. Its fields mirror actor.Config's where the
// idea is the same — workers, attempts, backoff, timeout, grace, errors,
// logs — and add what a queue in PostgreSQL needs. Its zero value is a
// complete configuration.
type Config[T any] struct {
	// Workers is the number of workers this process runs for a fixed
	// actor; 0 means 1 unless MaxWorkers is set.
	Workers int
	// MinWorkers and MaxWorkers make the actor elastic in this process: it
	// starts MinWorkers workers, adds one, up to MaxWorkers, for each task
	// it takes while none is idle, and lets a worker go after it has idled
	// for KeepAlive, never going below MinWorkers.
	MinWorkers int
	MaxWorkers int
	// KeepAlive is how long an elastic actor keeps a worker above
	// MinWorkers idle; 0 means one minute.
	KeepAlive time.Duration

	// MaxAttempts is how many times a task is run before it goes to the
	// dead letters; 0 means 1, no retry. A run whose worker was lost counts.
	MaxAttempts int
	// Backoff spaces the attempts, as in actor.Config.
	Backoff actor.Backoff
	// Timeout bounds each attempt: the handler's context ends after it.
	// 0 means no timeout.
	Timeout time.Duration
	// Grace is how long Close waits for running handlers after cancelling
	// their contexts, before giving their tasks back; 0 means one second.
	Grace time.Duration

	// OnError receives every failed attempt, and every task dead-lettered
	// without running (lost too often, canceled, undecodable). It runs on
	// the worker. Nil logs each through Logger.
	OnError func(err *actor.TaskError)
	// Logger receives the actor's logs; nil means slog.Default().
	Logger *slog.Logger

	// Schema is the schema of the tables, made by Migrate; "" means
	// DefaultSchema.
	Schema string
	// Codec encodes payloads into their rows; nil means JSON.
	Codec Codec[T]
	// Lease is how long a running task stays taken without a heartbeat: a
	// task whose worker died runs again within Lease, plus PollInterval
	// when no other notice wakes a worker. 0 means DefaultLease.
	Lease time.Duration
	// Heartbeat is how often the process extends the leases of its running
	// tasks, in one statement; 0 means a third of Lease.
	Heartbeat time.Duration
	// PollInterval is how often idle workers look for tasks when no
	// notification wakes them: it bounds how late a delayed task or a
	// retry starts, and how soon a task is taken behind PgBouncer in
	// transaction mode; 0 means one second.
	PollInterval time.Duration
	// FetchBatch is the most tasks one statement takes; 0 means 250. A
	// round fetches at most this many, so with many workers it bounds how
	// many tasks a round can start: rounds of up to 250 burned down 10-17%
	// more tasks a second than rounds of up to 100 at 2,000 workers on 2
	// cores, and were level at 100 and 500 (docs/benchmarks.md). A fetch
	// never takes more tasks than there are workers waiting for one.
	FetchBatch int
	// Rounds is how many rounds — the batches that commit the workers'
	// completions, fetch their next tasks and renew their leases — this
	// process keeps in flight at once for the actor, each on a connection
	// of its own and so on a server process of its own; 0 means 2. More
	// rounds let a server with cores to spare work on more of them at
	// once: one process burning down a backlog with 2,000 workers on 16
	// cores took 58-63k tasks a second with 2 rounds, 87-90k with 4 and
	// 94-101k with 8 (two runs of the benchmark). They cost elsewhere, so
	// the default stays 2: on the same machine the tables grew past 50 MB
	// at 8 rounds where 2 kept them under 40, and four processes sharing
	// the actor took 1.04 times what one did at 4 rounds each and 0.73
	// times at 8 (at 2 rounds, 1.76-1.84 times): what the rounds share is
	// the server's backends, so the rounds of every process that works
	// the actor add up; where the server
	// and the workers share a few cores, more rounds only split the work
	// into smaller rounds (on 2 cores at 500 workers, 4 rounds burned down
	// 15% fewer tasks a second than 2, and 8 rounds 39% fewer). Raise it
	// for one process on many cores that must work off a backlog fast,
	// and count the rounds of all processes together (docs/benchmarks.md,
	// "Issue 23 on 16 cores" and its call 6). The pool needs a
	// connection for each round besides those the workers' own statements
	// and the senders use.
	Rounds int
	// MaxLost is how many times a task's worker may be lost — killed,
	// frozen or cut off past its lease — before the task is dead-lettered
	// with ReasonLost instead of run again; 0 means 3.
	MaxLost int
	// DisableListen stops the actor from holding a connection in LISTEN:
	// workers then find tasks by polling only. Set it behind PgBouncer in
	// transaction mode, where notifications are not delivered.
	DisableListen bool
	// DisableVacuum stops the actor from vacuuming its tables when they
	// hold many dead rows, for a server whose autovacuum, or a job of its
	// own, does it. The counters are still folded.
	DisableVacuum bool
	// MaintenanceInterval is how often this process offers to maintain the
	// schema's tables — fold the counters, vacuum what needs it — of which
	// one process does it each interval; 0 means one second. For an
	// interval after a vacuum of many dead rows the offers come sooner,
	// down to an eighth of it (see the package doc's Storage and vacuum).
	MaintenanceInterval time.Duration
	// Tracer follows each send and each attempt, and carries the sender's
	// trace context to the handler's (see Tracer and package otelpgactor);
	// nil traces nothing.
	Tracer Tracer
}

// Defaults.
const (
	DefaultLease        = 5 * time.Second
	defaultPollInterval = time.Second
	defaultFetchBatch   = 250
	defaultMaxLost      = 3
	defaultGrace        = time.Second
	defaultKeepAlive    = time.Minute
	maxFetchBatch       = 10000
	defaultRounds       = 2
	maxRounds           = 64
	minLease            = 100 * time.Millisecond
)

// Validate reports every field that breaks a rule, as *actor.ConfigError
// values joined with errors.Join; nil means the configuration is usable.
// The fields shared with actor.Config follow its rules.
func (c Config[T]) Validate() error {
	check := errs.NewChecker("pgactor")
	check.Adopt(actor.Config[T]{
		Workers: c.Workers, MinWorkers: c.MinWorkers, MaxWorkers: c.MaxWorkers, KeepAlive: c.KeepAlive,
		MaxAttempts: c.MaxAttempts, Backoff: c.Backoff, Timeout: c.Timeout, Grace: c.Grace,
	}.Validate())
	if c.Schema != "" && !schemaName.MatchString(c.Schema) {
		check.Bad("Schema", c.Schema, "must be 1 to 63 lower-case letters, digits and underscores, not starting with a digit (empty means "+DefaultSchema+")")
	}
	errs.NotNegative(check, "Lease", c.Lease, "the default, "+DefaultLease.String())
	errs.NotNegative(check, "Heartbeat", c.Heartbeat, "a third of the Lease")
	errs.NotNegative(check, "PollInterval", c.PollInterval, "the default, "+defaultPollInterval.String())
	errs.NotNegative(check, "MaintenanceInterval", c.MaintenanceInterval, "the default, "+defaultMaintainEach.String())
	errs.NotNegative(check, "MaxLost", c.MaxLost, fmt.Sprintf("the default, %d", defaultMaxLost))
	if c.Lease > 0 && c.Lease < minLease {
		check.Bad("Lease", c.Lease, fmt.Sprintf("must be at least %v (zero means the default, %v)", minLease, DefaultLease))
	}
	lease := c.Lease
	if lease == 0 {
		lease = DefaultLease
	}
	if c.Heartbeat > 0 && c.Heartbeat > lease/2 { // twice a huge Heartbeat would overflow
		check.Bad("Heartbeat", c.Heartbeat, fmt.Sprintf("must not exceed half the Lease (%v), so that a lease is renewed before it runs out", lease))
	}
	if c.FetchBatch < 0 || c.FetchBatch > maxFetchBatch {
		check.Bad("FetchBatch", c.FetchBatch, fmt.Sprintf("must be between 0 and %d (zero means the default, %d)", maxFetchBatch, defaultFetchBatch))
	}
	if c.Rounds < 0 || c.Rounds > maxRounds {
		check.Bad("Rounds", c.Rounds, fmt.Sprintf("must be between 0 and %d (zero means the default, %d)", maxRounds, defaultRounds))
	}
	return check.Err()
}

// settings is a validated Config with the defaults filled in.
type settings struct {
	min, max     int
	keepAlive    time.Duration
	maxAttempts  int
	backoff      actor.Backoff
	timeout      time.Duration
	grace        time.Duration
	schema       string
	lease        time.Duration
	heartbeat    time.Duration
	poll         time.Duration
	fetchBatch   int
	rounds       int
	maxLost      int
	listen       bool
	vacuum       bool
	maintainEach time.Duration
}

func (c *Config[T]) settings() settings {
	s := settings{
		min: c.Workers, max: c.Workers, keepAlive: c.KeepAlive,
		maxAttempts: max(c.MaxAttempts, 1), backoff: c.Backoff, timeout: c.Timeout, grace: c.Grace,
		schema: c.Schema, lease: c.Lease, heartbeat: c.Heartbeat, poll: c.PollInterval,
		fetchBatch: c.FetchBatch, rounds: c.Rounds, maxLost: c.MaxLost, listen: !c.DisableListen, vacuum: !c.DisableVacuum,
		maintainEach: c.MaintenanceInterval,
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
	if s.schema == "" {
		s.schema = DefaultSchema
	}
	if s.lease == 0 {
		s.lease = DefaultLease
	}
	if s.heartbeat == 0 {
		s.heartbeat = s.lease / 3
	}
	if s.poll == 0 {
		s.poll = defaultPollInterval
	}
	if s.fetchBatch == 0 {
		s.fetchBatch = defaultFetchBatch
	}
	if s.rounds == 0 {
		s.rounds = defaultRounds
	}
	if s.maxLost == 0 {
		s.maxLost = defaultMaxLost
	}
	if s.maintainEach == 0 {
		s.maintainEach = defaultMaintainEach
	}
	return s
}
