// Package queues compares pgactor, actorpool's durable actor, with River
// (github.com/riverqueue/river), the Go job queue on PostgreSQL, on the same
// server in the same run: burn-down throughput, sustained throughput with the
// size of the tables, send-to-start latency below saturation, and the time
// until the task of a worker killed with SIGKILL runs again.
//
// Each queue runs in a schema of its own, dropped and created for every
// cell. River is set up as its published benchmark (riverbench) sets it up:
// FetchCooldown 2ms, FetchPollInterval 20ms, no-op jobs inserted in batches
// with InsertMany. Both queues get pools of the same size.
//
// The recovery cell kills a child process: the binary that runs a cell must
// call MaybeChild first thing in main (or TestMain), which turns the process
// into that child when the parent asked for one.
package queues

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A Queue is one job queue under test, opened on its own schema.
type Queue interface {
	// Start starts workers on the queue: run is called as each task's
	// handler begins, with the task's payload. stop stops them, letting
	// running handlers end.
	Start(ctx context.Context, workers int, run func(payload int64)) (stop func(context.Context) error, err error)
	// InsertBatch inserts a task for each payload, in as few statements as
	// the queue allows.
	InsertBatch(ctx context.Context, payloads []int64) error
	// Send inserts one task and returns once it is committed.
	Send(ctx context.Context, payload int64) error
	// Drained reports whether every task inserted has been completed and
	// its completion committed.
	Drained(ctx context.Context) (bool, error)
	// TableBytes returns the size of the queue's tables, with their indexes
	// and TOAST: pg_total_relation_size summed over the schema's tables.
	TableBytes(ctx context.Context) (int64, error)
	// ChildOptions returns the options the recovery cell's child opens the
	// same queue with, in another process.
	ChildOptions() Options
	// Close closes the queue's clients and pools and drops its schema unless
	// it was attached to by a child.
	Close(ctx context.Context) error
}

// A Kind is a queue and the settings it runs under.
type Kind struct {
	// Name is the name in the benchmarks' names: pgactor, river,
	// river-defaults, jetstream, jetstream-syncalways, jetstream-r3.
	Name string
	// Queue is "pgactor", "river" or "jetstream" (jsactor): which library.
	Queue string
	// RiverDefaults runs River with its client's default fetch settings
	// (FetchCooldown 100ms, FetchPollInterval 1s) instead of riverbench's.
	RiverDefaults bool
	// Nodes is how many NATS servers a jetstream queue runs on, embedded
	// in this process: 0 or 1 for a single node, 3 for a cluster whose
	// streams are replicated three times (R3).
	Nodes int
	// SyncAlways has a jetstream queue's servers fsync every write
	// instead of every jsserver.DefaultSyncInterval.
	SyncAlways bool
	// Rounds is a pgactor queue's Config.Rounds: how many rounds its pump
	// keeps in flight; 0 for the default.
	Rounds int
}

// The kinds the cells compare.
var (
	PGActor       = Kind{Name: "pgactor", Queue: "pgactor"}
	River         = Kind{Name: "river", Queue: "river"}
	RiverDefaults = Kind{Name: "river-defaults", Queue: "river", RiverDefaults: true}

	// PGActorRounds are pgactor with 4, 8 and 16 rounds in flight instead
	// of its default 2: what a machine with cores to spare makes of more.
	PGActorRounds = []Kind{
		{Name: "pgactor-rounds4", Queue: "pgactor", Rounds: 4},
		{Name: "pgactor-rounds8", Queue: "pgactor", Rounds: 8},
		{Name: "pgactor-rounds16", Queue: "pgactor", Rounds: 16},
	}

	JetStream           = Kind{Name: "jetstream", Queue: "jetstream"}
	JetStreamSyncAlways = Kind{Name: "jetstream-syncalways", Queue: "jetstream", SyncAlways: true}
	JetStreamR3         = Kind{Name: "jetstream-r3", Queue: "jetstream", Nodes: 3}
)

// JetStreamKinds are jsactor's kinds: a single node at the default sync
// interval and fsyncing every write, and a three-node cluster with R3
// streams.
var JetStreamKinds = []Kind{JetStream, JetStreamSyncAlways, JetStreamR3}

// Options are the settings a queue is opened with.
type Options struct {
	// DSN is the PostgreSQL connection URL.
	DSN string
	// Schema is the schema the queue's tables live in.
	Schema string
	// Conns is the size of the queue's connection pool; 0 means 20.
	Conns int
	// Rescue is how long a running task's worker may be silent before the
	// task is run again: pgactor's Lease, River's RescueStuckJobsAfter.
	// 0 means each library's default (pgactor 5s, River 1h).
	Rescue time.Duration
	// Attach opens an existing schema instead of dropping and creating it,
	// and leaves it in place at Close: the child of the recovery cell. A
	// jetstream queue attaches to the servers NATS names instead of
	// starting its own.
	Attach bool
	// NATS is the client URLs, comma-separated, of the servers an
	// attaching jetstream queue connects to: its parent's. A jetstream
	// queue that does not attach starts servers of its own, whose URLs its
	// ChildOptions carry.
	NATS string
}

func (o Options) conns() int {
	if o.Conns == 0 {
		return 20
	}
	return o.Conns
}

// Open opens a queue of kind k as o says, creating its schema afresh — for
// jetstream, starting its servers, each with a new store — unless o.Attach
// is set.
func Open(ctx context.Context, k Kind, o Options) (Queue, error) {
	switch k.Queue {
	case "pgactor":
		return openPGActor(ctx, k, o)
	case "river":
		return openRiver(ctx, k, o)
	case "jetstream":
		return openJetStream(ctx, k, o)
	}
	return nil, fmt.Errorf("queues: unknown queue %q", k.Queue)
}

// KindNamed returns the kind called name.
func KindNamed(name string) (Kind, error) {
	for _, k := range append([]Kind{PGActor, River, RiverDefaults, JetStream, JetStreamSyncAlways, JetStreamR3}, PGActorRounds...) {
		if k.Name == name {
			return k, nil
		}
	}
	return Kind{}, fmt.Errorf("queues: unknown kind %q (want pgactor, pgactor-rounds4, pgactor-rounds8, pgactor-rounds16, river, river-defaults, jetstream, jetstream-syncalways or jetstream-r3)", name)
}

// quiet is the logger the queues get: errors only, on standard error, so
// that a failing queue says why and a working one says nothing.
func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// A db runs statements: a *pgpool.Pool for pgactor, a *pgxpool.Pool for
// River.
type db interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// schemaBytes returns the size of the tables of schema with their indexes
// and TOAST.
func schemaBytes(ctx context.Context, d db, schema string) (int64, error) {
	var n int64
	err := d.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind = 'r'`, schema).Scan(&n)
	return n, err
}

// dropSchema drops schema with everything in it.
func dropSchema(ctx context.Context, d db, schema string) error {
	_, err := d.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	return err
}
