package jsactor

import (
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/errs"
)

// Config shapes a durable actor on JetStream. Its fields mirror
// pgactor.Config's where the idea is the same — workers, attempts,
// backoff, timeout, grace, errors, logs, lease, heartbeat — and add what
// streams need. Its zero value is a complete configuration.
type Config[T any] struct {
	// Workers is the number of workers this process runs; 0 means 1.
	Workers int

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
	// without running (lost too often, undecodable). It runs on the
	// worker, before the task is retried or dead-lettered; a panic in it
	// is logged with the failure, and neither it nor runtime.Goexit
	// changes what happens to the task. Nil logs each through Logger.
	OnError func(err *actor.TaskError)
	// Logger receives the actor's logs; nil means slog.Default().
	Logger *slog.Logger
	// Tracer follows each send and each attempt, and carries the sender's
	// trace context to the handler's in the task's headers (see Tracer
	// and package oteltask); nil traces nothing.
	Tracer Tracer

	// Prefix names the actor's streams (<Prefix>_<name>) and subjects
	// (<Prefix>.<name>.…), so that several applications can share a
	// server; "" means DefaultPrefix.
	Prefix string
	// Codec encodes payloads into messages; nil means JSON.
	Codec Codec[T]
	// Lease is the consumer's ack wait: how long a running task stays
	// taken without a heartbeat. A task whose worker died runs again
	// within Lease and a fetch. 0 means DefaultLease. New lengthens the
	// ack wait of consumers that exist to Lease, and never shortens it,
	// which other processes of the actor may count on: with processes on
	// several Leases, the longest holds.
	Lease time.Duration
	// Heartbeat is how often the process renews the leases of its running
	// tasks; 0 means a third of Lease.
	Heartbeat time.Duration
	// FetchWait is how long one pull request waits for tasks on the
	// server before the next is sent; 0 means one second, and it is at
	// most a quarter of Lease. Tasks arrive as soon as they are stored
	// whatever it is; it bounds how long Close waits for the request in
	// flight.
	FetchWait time.Duration
	// FetchBatch is the most tasks one pull request asks for; 0 means 100.
	FetchBatch int
	// MaxLost is how many times a task's worker may be lost — killed,
	// frozen or cut off past its lease — before the task is dead-lettered
	// with ReasonLost instead of run again; 0 means 3.
	MaxLost int
	// Replicas is how many servers of a cluster hold each of the actor's
	// streams when New creates them: 1 (the default) on a single server,
	// 3 for production on a cluster. Existing streams keep theirs.
	Replicas int
	// DedupWindow is the duplicate window of the work and dead-letter
	// streams when New creates them: a send retried within it with the
	// same message ID is stored once, and a task whose next copy or dead
	// letter was stored but whose original's acknowledgement was lost is
	// settled once only if the original is delivered again within it
	// (see the package documentation's Attempts, retries and dead
	// letters). It must be at least four times the Lease; 0 means two
	// minutes, or four Leases if that is longer.
	DedupWindow time.Duration
	// FlushInterval is how often this process adds its counters to the
	// counter stream; 0 means one second.
	FlushInterval time.Duration
}

// DefaultPrefix is the prefix of the streams and subjects of an actor
// whose Config.Prefix is empty.
const DefaultPrefix = "actorpool"

// Defaults.
const (
	DefaultLease         = 5 * time.Second
	defaultGrace         = time.Second
	defaultFetchWait     = time.Second
	defaultFetchBatch    = 100
	defaultMaxLost       = 3
	defaultDedupWindow   = 2 * time.Minute
	defaultFlushInterval = time.Second
	minLease             = 500 * time.Millisecond
	// dedupLeases is how many Leases the duplicate window lasts at least:
	// the original of a settled task whose acknowledgement was lost is
	// delivered again a Lease after its last renewal, once a worker asks,
	// and must find its copy within the window.
	dedupLeases   = 4
	maxFetchBatch = 10000
	maxReplicas   = 5
)

// namePattern is what a prefix and an actor's name may hold: they become
// parts of stream names and of subjects.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

const nameRule = "must be 1 to 64 letters, digits, '-' and '_': it names streams and subjects"

// Validate reports every field that breaks a rule, as *actor.ConfigError
// values joined with errors.Join; nil means the configuration is usable.
// The fields shared with actor.Config follow its rules.
func (c Config[T]) Validate() error {
	check := errs.NewChecker("jsactor")
	check.Adopt(actor.Config[T]{
		Workers: c.Workers, MaxAttempts: c.MaxAttempts, Backoff: c.Backoff, Timeout: c.Timeout, Grace: c.Grace,
	}.Validate())
	if c.Prefix != "" && !namePattern.MatchString(c.Prefix) {
		check.Bad("Prefix", c.Prefix, nameRule+" (empty means "+DefaultPrefix+")")
	}
	errs.NotNegative(check, "Lease", c.Lease, "the default, "+DefaultLease.String())
	errs.NotNegative(check, "Heartbeat", c.Heartbeat, "a third of the Lease")
	errs.NotNegative(check, "FetchWait", c.FetchWait, "the default, "+defaultFetchWait.String())
	errs.NotNegative(check, "MaxLost", c.MaxLost, fmt.Sprintf("the default, %d", defaultMaxLost))
	errs.NotNegative(check, "DedupWindow", c.DedupWindow, "the default, "+defaultDedupWindow.String())
	errs.NotNegative(check, "FlushInterval", c.FlushInterval, "the default, "+defaultFlushInterval.String())
	if c.Lease > 0 && c.Lease < minLease {
		check.Bad("Lease", c.Lease, fmt.Sprintf("must be at least %v (zero means the default, %v)", minLease, DefaultLease))
	}
	lease := c.Lease
	if lease == 0 {
		lease = DefaultLease
	}
	if c.DedupWindow > 0 && c.DedupWindow/dedupLeases < lease { // dedupLeases times a huge Lease would overflow
		check.Bad("DedupWindow", c.DedupWindow, fmt.Sprintf("must be at least %d times the Lease (%v), so that a task delivered again after its acknowledgement was lost finds the copy it was settled by (zero means the default: the longer of %v and %d Leases)",
			dedupLeases, lease, defaultDedupWindow, dedupLeases))
	}
	if c.Heartbeat > 0 && c.Heartbeat > lease/2 { // twice a huge Heartbeat would overflow
		check.Bad("Heartbeat", c.Heartbeat, fmt.Sprintf("must not exceed half the Lease (%v), so that a lease is renewed before it runs out", lease))
	}
	if c.FetchBatch < 0 || c.FetchBatch > maxFetchBatch {
		check.Bad("FetchBatch", c.FetchBatch, fmt.Sprintf("must be between 0 and %d (zero means the default, %d)", maxFetchBatch, defaultFetchBatch))
	}
	if c.Replicas < 0 || c.Replicas > maxReplicas {
		check.Bad("Replicas", c.Replicas, fmt.Sprintf("must be between 0 and %d (zero means 1; 3 on a cluster for production)", maxReplicas))
	}
	return check.Err()
}

// minDedup is the shortest duplicate window a Lease needs: dedupLeases
// times it.
func minDedup(lease time.Duration) time.Duration {
	if lease > math.MaxInt64/dedupLeases {
		return math.MaxInt64 // a Lease of decades
	}
	return lease * dedupLeases
}

// settings is a validated Config with the defaults filled in.
type settings struct {
	workers     int
	maxAttempts int
	backoff     actor.Backoff
	timeout     time.Duration
	grace       time.Duration
	prefix      string
	lease       time.Duration
	heartbeat   time.Duration
	fetchWait   time.Duration
	fetchBatch  int
	maxLost     int
	replicas    int
	dedup       time.Duration
	flushEach   time.Duration
}

func (c *Config[T]) settings() settings {
	s := settings{
		workers: max(c.Workers, 1), maxAttempts: max(c.MaxAttempts, 1), backoff: c.Backoff,
		timeout: c.Timeout, grace: c.Grace, prefix: c.Prefix, lease: c.Lease, heartbeat: c.Heartbeat,
		fetchWait: c.FetchWait, fetchBatch: c.FetchBatch, maxLost: c.MaxLost, replicas: max(c.Replicas, 1),
		dedup: c.DedupWindow, flushEach: c.FlushInterval,
	}
	if s.grace == 0 {
		s.grace = defaultGrace
	}
	if s.prefix == "" {
		s.prefix = DefaultPrefix
	}
	if s.lease == 0 {
		s.lease = DefaultLease
	}
	if s.heartbeat == 0 {
		s.heartbeat = s.lease / 3
	}
	if s.fetchWait == 0 {
		s.fetchWait = defaultFetchWait
	}
	if s.fetchBatch == 0 {
		s.fetchBatch = defaultFetchBatch
	}
	if s.maxLost == 0 {
		s.maxLost = defaultMaxLost
	}
	if s.dedup == 0 {
		s.dedup = max(defaultDedupWindow, minDedup(s.lease))
	}
	if s.flushEach == 0 {
		s.flushEach = defaultFlushInterval
	}
	return s
}
