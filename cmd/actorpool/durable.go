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

// A durableQueue is the backend of a durable audit actor: where its tasks
// are stored and its Stats read. The rest of the run, the same on every
// backend, is durableAudit's.
type durableQueue interface {
	// put stores the task of one request.
	put(ctx context.Context, e auditEvent) error
	// read returns the actor's Stats in pgactor's shape, which
	// jsactor.Stats shares field for field.
	read(ctx context.Context) (pgactor.Stats, error)
	// stop closes the actor, which gives the tasks it still holds back to
	// the queue; read works after it, release not.
	stop(ctx context.Context) error
	// release lets go of what the reads needed, after the last one.
	release()
}

// durableAudit is the audit actor when it is durable: its tasks are kept
// by q in a store that outlives the run, so that a run stopped by Ctrl-C,
// or killed, loses none of them, and the next run finishes them. It shows
// the actor in the in-memory actor's shape, counted from the start of the
// run, and says what the run found and what it leaves.
type durableAudit struct {
	q       durableQueue
	kind    string        // the store, such as "PostgreSQL"
	name    string        // the actor's
	place   string        // where in the store the queue is, as the footer says it: `schema "x"`
	intro   string        // the header's first line, which says where the queue is
	settle  int           // how many reads in a row must find the queue empty for drain to end
	start   pgactor.Stats // read before the workers started: what earlier runs left
	refused atomic.Uint64 // sends that failed

	mu   sync.Mutex
	last actor.Stats // the latest stats read, kept while reads fail
	end  *pgactor.Stats
}

func (d *durableAudit) store() string { return d.kind }

// left is how many of the actor's tasks s says are still to run.
func left(s pgactor.Stats) int { return s.Queued + s.Scheduled + s.Running + s.Retrying }

// header says where the queue is and what this run found in it.
func (d *durableAudit) header() string {
	s := d.intro
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
		return fmt.Sprintf("actor %q is durable: what it left in %s could not be read; the next run says what it finds", d.name, d.place)
	case left(*d.end) == 0:
		return fmt.Sprintf("actor %q is durable: its queue in %s is empty", d.name, d.place)
	}
	return fmt.Sprintf("actor %q is durable: %s left queued in %s for the next run", d.name, plural(left(*d.end), "task"), d.place)
}

func (d *durableAudit) send(ctx context.Context, e auditEvent) error {
	// A request that succeeded gets its audit task even when the run ends
	// during the send, as the in-memory actor takes a send on an ended
	// context when its mailbox has room; the send has its own bound.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
	defer cancel()
	err := d.q.put(sctx, e)
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
	if s, err := d.q.read(ctx); err == nil {
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
// then, or at once when interrupted, it stops the actor, which gives the
// tasks it still holds back to the queue, reads what is left there, and
// lets go of the store.
func (d *durableAudit) close(ctx context.Context, interrupted bool) error {
	if !interrupted {
		d.drain(ctx)
	}
	err := d.q.stop(ctx)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statsTimeout)
	defer cancel()
	s, serr := d.q.read(rctx)
	d.mu.Lock()
	if serr == nil {
		d.last, d.end = d.since(s), &s
	}
	d.mu.Unlock()
	d.q.release()
	return errors.Join(err, serr)
}

// drain waits until the actor's queue is empty, as settle reads in a row
// a poll apart find it, or until ctx ends.
func (d *durableAudit) drain(ctx context.Context) {
	t := time.NewTicker(drainPoll)
	defer t.Stop()
	empty := 0
	for {
		if s, err := d.q.read(ctx); err == nil && left(s) == 0 {
			if empty++; empty >= d.settle {
				return
			}
		} else {
			empty = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pgQueue keeps a durable audit actor's tasks in PostgreSQL: rows in a
// schema that outlives the run.
type pgQueue struct {
	a      *pgactor.Actor[auditEvent] // its workers, on the audit pool
	sender *pgactor.Actor[auditEvent] // send-only, on the clients' pool
}

// newDurableAudit migrates schema, reads what earlier runs left in it, and
// starts the actor with the file's or the flags' settings, of which a
// durable actor has all but the mailbox's (capacity, overflow). It returns
// the actor's workers' pgactor.Actor too, for the metrics.
func newDurableAudit(ctx context.Context, pool, sends *pgpool.Pool, schema string, cfg config.Actor, handle actor.Handler[auditEvent], logger *slog.Logger) (*durableAudit, *pgactor.Actor[auditEvent], error) {
	from, to, err := pgactor.Migrate(ctx, pool, schema)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot set up the durable audit actor: %w", err)
	}
	d := &durableAudit{kind: "PostgreSQL", settle: 1}
	d.start, err = pgactor.ReadStats(ctx, pool, schema, cfg.Name)
	if err != nil && !errors.Is(err, pgactor.ErrUnknownActor) {
		return nil, nil, fmt.Errorf("cannot set up the durable audit actor: %w", err)
	}
	q := &pgQueue{}
	q.a, err = pgactor.New(ctx, pool, cfg.Name, handle, pgactor.Config[auditEvent]{
		Workers: cfg.Workers, MinWorkers: cfg.MinWorkers, MaxWorkers: cfg.MaxWorkers, KeepAlive: cfg.KeepAlive,
		MaxAttempts: cfg.MaxAttempts, Backoff: cfg.Backoff, Timeout: cfg.Timeout, Grace: cfg.Grace,
		Lease: cfg.Lease, Heartbeat: cfg.Heartbeat,
		OnError: func(*actor.TaskError) {}, // counted in Stats, summed up at the end
		Logger:  logger,
		Schema:  schema,
	})
	if err == nil {
		q.sender, err = pgactor.New[auditEvent](ctx, sends, cfg.Name, nil, pgactor.Config[auditEvent]{Logger: logger, Schema: schema})
		if err != nil {
			q.a.Close(ctx)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cannot set up the durable audit actor: %w", err)
	}
	d.q, d.name, d.place = q, q.a.Name(), fmt.Sprintf("schema %q", q.a.Schema())
	d.intro = fmt.Sprintf("  actor %q is durable: its queue is in %s, kept between runs", d.name, d.place)
	if from != to {
		d.intro += fmt.Sprintf(" (migrated from version %d to %d)", from, to)
	}
	d.intro += "\n"
	return d, q.a, nil
}

// put stores the task through the send-only actor on the clients' pool,
// as a request handler sends on the application's pool: the audit pool's
// connections are the workers'.
func (q *pgQueue) put(ctx context.Context, e auditEvent) error {
	_, err := q.sender.Send(ctx, e)
	return err
}

func (q *pgQueue) read(ctx context.Context) (pgactor.Stats, error) { return q.a.Stats(ctx) }

func (q *pgQueue) stop(ctx context.Context) error {
	return errors.Join(q.sender.Close(ctx), q.a.Close(ctx))
}

// release has nothing to let go of: the pools are the run's.
func (q *pgQueue) release() {}
