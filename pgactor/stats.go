package pgactor

import (
	"context"
	"fmt"
	"time"
)

// Stats is a snapshot of a durable actor, read from one snapshot of the
// database, so that
//
//	Accepted = Completed + DeadLettered + Queued + Scheduled + Running + Retrying
//
// holds in every one. The counters and the task gauges cover every process
// running the actor; Workers, Busy and Idle are this process's.
type Stats struct {
	// Counters since the actor was first created in the schema.
	Accepted     uint64 // tasks stored by sends, and by replays
	Completed    uint64 // tasks whose handler succeeded and whose completion committed
	DeadLettered uint64 // tasks moved to the dead letters, deleted since or not
	Failed       uint64 // failed attempts
	Retried      uint64 // retries scheduled
	Lost         uint64 // runs taken over after their worker's lease ran out
	Replayed     uint64 // dead letters replayed; included in Accepted

	// Task gauges.
	Queued    int // due and waiting for a worker, retries whose backoff passed included
	Scheduled int // sent to run later (RunAt, After), not yet due
	Running   int // held by a worker, or by one that died whose lease no one has taken over yet
	Retrying  int // waiting for their backoff
	// DeadLetters is how many dead letters are stored now.
	DeadLetters int
	// OldestQueued is how long the task that has been due longest has
	// waited for a worker; 0 when none waits.
	OldestQueued time.Duration
	// Paused is whether the actor is paused (Admin.Pause, Actor.Pause):
	// no process takes its tasks until it is resumed.
	Paused bool

	// This process's workers.
	Workers int
	Busy    int
	Idle    int
}

// Stats reads the actor's counters and gauges.
func (a *Actor[T]) Stats(ctx context.Context) (Stats, error) {
	s, err := ReadStats(ctx, a.pool, a.set.schema, a.name)
	if err != nil {
		return s, err
	}
	a.mu.Lock()
	s.Workers, s.Busy, s.Idle = a.workers, a.busy, a.idle
	a.mu.Unlock()
	return s, nil
}

// ReadStats reads the counters and gauges of the actor named name in
// schema, without an Actor: for a collector or a command. It fails with
// ErrUnknownActor when no New has registered the name there, and with
// ErrNoSchema when the schema has not been migrated. Workers, Busy and
// Idle are zero.
func ReadStats(ctx context.Context, db Querier, schema, name string) (Stats, error) {
	if err := checkSchema(schema); err != nil {
		return Stats{}, err
	}
	s, known, err := (&store{schema: schema, actor: name}).stats(ctx, db)
	switch {
	case isUndefined(err):
		return Stats{}, fmt.Errorf("pgactor: stats of %q: %w: schema %q has no tables: run pgactor.Migrate or `actorpool migrate --postgres URL --schema %s`: %w",
			name, ErrNoSchema, schema, schema, err)
	case err != nil:
		return Stats{}, fmt.Errorf("pgactor: stats of %q: %w", name, err)
	case !known:
		return Stats{}, fmt.Errorf("pgactor: stats of %q: %w in schema %q", name, ErrUnknownActor, schema)
	}
	return s, nil
}

// Actors returns the names of the actors registered in schema, in order.
func Actors(ctx context.Context, db Querier, schema string) ([]string, error) {
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	names, err := (&store{schema: schema}).actors(ctx, db)
	switch {
	case isUndefined(err):
		return nil, fmt.Errorf("pgactor: list actors: %w: schema %q: %w", ErrNoSchema, schema, err)
	case err != nil:
		return nil, fmt.Errorf("pgactor: list actors: %w", err)
	}
	return names, nil
}
