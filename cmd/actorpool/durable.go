package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/config"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgpool"
)

// defaultDemoSchema holds the durable audit actor's tables unless --schema
// names another: a schema of the demo's own, apart from pgactor's default,
// so that the demo's actor cannot mix with an application's.
const defaultDemoSchema = "pgactor_demo"

// durableExtraConns are the connections of the durable audit actor's pool
// beyond one per worker's task transaction: for the statements it runs for
// all its workers at once, and for reading its Stats.
const durableExtraConns = 2

// Bounds on the reads of the durable actor's Stats, and how often the end
// of a run looks whether the queue is empty.
const (
	statsTimeout = 2 * time.Second
	drainPoll    = 50 * time.Millisecond
)

// durableAudit is the audit actor on pgactor: its tasks are rows in a
// schema that outlives the run, so that a run stopped by Ctrl-C, or
// killed, loses none of them, and the next run finishes them.
type durableAudit struct {
	a        *pgactor.Actor[auditEvent] // its workers, on the audit pool
	sender   *pgactor.Actor[auditEvent] // send-only, on the clients' pool
	from, to int                        // the versions Migrate took the schema from and to
	start    pgactor.Stats              // read before the workers started: what earlier runs left
	refused  atomic.Uint64              // sends that failed

	mu   sync.Mutex
	last actor.Stats // the latest stats read, kept while reads fail
	end  *pgactor.Stats
}

// newDurableAudit migrates schema, reads what earlier runs left in it, and
// starts the actor with the file's or the flags' settings, of which a
// durable actor has all but the mailbox's (capacity, overflow).
func newDurableAudit(ctx context.Context, pool, sends *pgpool.Pool, schema string, cfg config.Actor, handle actor.Handler[auditEvent], logger *slog.Logger) (*durableAudit, error) {
	d := &durableAudit{}
	var err error
	d.from, d.to, err = pgactor.Migrate(ctx, pool, schema)
	if err != nil {
		return nil, fmt.Errorf("cannot set up the durable audit actor: %w", err)
	}
	d.start, err = pgactor.ReadStats(ctx, pool, schema, cfg.Name)
	if err != nil && !errors.Is(err, pgactor.ErrUnknownActor) {
		return nil, fmt.Errorf("cannot set up the durable audit actor: %w", err)
	}
	d.a, err = pgactor.New(ctx, pool, cfg.Name, handle, pgactor.Config[auditEvent]{
		Workers: cfg.Workers, MinWorkers: cfg.MinWorkers, MaxWorkers: cfg.MaxWorkers, KeepAlive: cfg.KeepAlive,
		MaxAttempts: cfg.MaxAttempts, Backoff: cfg.Backoff, Timeout: cfg.Timeout, Grace: cfg.Grace,
		Lease: cfg.Lease, Heartbeat: cfg.Heartbeat,
		OnError: func(*actor.TaskError) {}, // counted in Stats, summed up at the end
		Logger:  logger,
		Schema:  schema,
	})
	if err == nil {
		d.sender, err = pgactor.New[auditEvent](ctx, sends, cfg.Name, nil, pgactor.Config[auditEvent]{Logger: logger, Schema: schema})
		if err != nil {
			d.a.Close(ctx)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot set up the durable audit actor: %w", err)
	}
	return d, nil
}

func (d *durableAudit) store() string { return "PostgreSQL" }

// left is how many of the actor's tasks s says are still to run.
func left(s pgactor.Stats) int { return s.Queued + s.Scheduled + s.Running + s.Retrying }

// header says where the queue is and what this run found in it.
func (d *durableAudit) header() string {
	s := fmt.Sprintf("  actor %q is durable: its queue is in schema %q, kept between runs", d.a.Name(), d.a.Schema())
	if d.from != d.to {
		s += fmt.Sprintf(" (migrated from version %d to %d)", d.from, d.to)
	}
	s += "\n"
	if n := left(d.start); n > 0 {
		s += fmt.Sprintf("  resumed %s left by an earlier run\n", plural(n, "task"))
	}
	return s
}

// footer says what the run leaves in the queue for the next one.
func (d *durableAudit) footer() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.end == nil:
		return fmt.Sprintf("actor %q is durable: what it left in schema %q could not be read; the next run says what it finds", d.a.Name(), d.a.Schema())
	case left(*d.end) == 0:
		return fmt.Sprintf("actor %q is durable: its queue in schema %q is empty", d.a.Name(), d.a.Schema())
	}
	return fmt.Sprintf("actor %q is durable: %s left queued in schema %q for the next run", d.a.Name(), plural(left(*d.end), "task"), d.a.Schema())
}

// send stores the task through the send-only actor on the clients' pool,
// as a request handler sends on the application's pool: the audit pool's
// connections are the workers'.
func (d *durableAudit) send(ctx context.Context, e auditEvent) error {
	// A request that succeeded gets its audit task even when the run ends
	// during the send, as the in-memory actor takes a send on an ended
	// context when its mailbox has room; the send has its own bound.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
	defer cancel()
	_, err := d.sender.Send(sctx, e)
	if err != nil {
		d.refused.Add(1)
	}
	return err
}

func (d *durableAudit) stats() actor.Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.end != nil {
		return d.last
	}
	ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
	defer cancel()
	if s, err := d.a.Stats(ctx); err == nil {
		d.last = d.since(s)
	}
	return d.last
}

// since returns s in the in-memory actor's shape, its counters counted
// from the start of the run.
func (d *durableAudit) since(s pgactor.Stats) actor.Stats {
	refused := d.refused.Load()
	return actor.Stats{
		Submitted:    s.Accepted - d.start.Accepted + refused,
		Rejected:     refused,
		Completed:    s.Completed - d.start.Completed,
		Failed:       s.Failed - d.start.Failed,
		Retried:      s.Retried - d.start.Retried,
		DeadLettered: s.DeadLettered - d.start.DeadLettered,
		Queued:       s.Queued + s.Scheduled,
		Retrying:     s.Retrying,
		Running:      s.Running,
		Workers:      s.Workers,
		Busy:         s.Busy,
		Idle:         s.Idle,
		OldestQueued: s.OldestQueued,
	}
}

// close lets a run that ran its course finish the queue until ctx ends;
// then, or at once when interrupted, it closes the actor, which gives the
// tasks it still holds back to the queue, and reads what is left there.
func (d *durableAudit) close(ctx context.Context, interrupted bool) error {
	if !interrupted {
		d.drain(ctx)
	}
	err := errors.Join(d.sender.Close(ctx), d.a.Close(ctx))
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statsTimeout)
	defer cancel()
	s, serr := d.a.Stats(rctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if serr == nil {
		d.last, d.end = d.since(s), &s
	}
	return errors.Join(err, serr)
}

// drain waits until the actor's queue is empty or ctx ends.
func (d *durableAudit) drain(ctx context.Context) {
	t := time.NewTicker(drainPoll)
	defer t.Stop()
	for {
		if s, err := d.a.Stats(ctx); err == nil && left(s) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
