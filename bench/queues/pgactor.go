package queues

import (
	"context"
	"errors"
	"fmt"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgpool"
	"github.com/jackc/pgx/v5"
)

// pgactorName is the actor's name in the bench schema.
const pgactorName = "bench"

// pgactorQueue is pgactor on a pgpool.Pool.
type pgactorQueue struct {
	rounds int // Config.Rounds
	o      Options
	pool   *pgpool.Pool
	sender *pgactor.Actor[int64] // a send-only actor: sends, and Stats
}

func openPGActor(ctx context.Context, k Kind, o Options) (*pgactorQueue, error) {
	cfg, err := pgpool.ParseConfig(o.DSN)
	if err != nil {
		return nil, fmt.Errorf("queues: pgactor: %w", err)
	}
	// A round in flight holds a connection, and the heartbeat, maintenance,
	// the listener and the sends want theirs beside them.
	cfg.MaxConns = int32(max(o.conns(), k.Rounds+8))
	pool, err := pgpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("queues: pgactor: %w", err)
	}
	q := &pgactorQueue{rounds: k.Rounds, o: o, pool: pool}
	if err := q.open(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("queues: pgactor: %w", err)
	}
	return q, nil
}

func (q *pgactorQueue) open(ctx context.Context) error {
	if !q.o.Attach {
		if err := dropSchema(ctx, q.pool, q.o.Schema); err != nil {
			return err
		}
		if _, _, err := pgactor.Migrate(ctx, q.pool, q.o.Schema); err != nil {
			return err
		}
	}
	s, err := pgactor.New(ctx, q.pool, pgactorName, nil, q.config(0))
	if err != nil {
		return err
	}
	q.sender = s
	return nil
}

func (q *pgactorQueue) config(workers int) pgactor.Config[int64] {
	return pgactor.Config[int64]{
		Workers: workers,
		Rounds:  q.rounds,
		Schema:  q.o.Schema,
		Lease:   q.o.Rescue,
		Logger:  quiet(),
	}
}

func (q *pgactorQueue) Start(ctx context.Context, workers int, run func(int64)) (func(context.Context) error, error) {
	a, err := pgactor.New(ctx, q.pool, pgactorName, func(ctx context.Context, t actor.Task[int64]) error {
		run(t.Payload)
		return nil
	}, q.config(workers))
	if err != nil {
		return nil, fmt.Errorf("queues: pgactor: %w", err)
	}
	return a.Close, nil
}

// insertChunk is how many tasks one batch statement sends, as riverbench's
// InsertMany batches.
const insertChunk = 5000

func (q *pgactorQueue) InsertBatch(ctx context.Context, payloads []int64) error {
	for len(payloads) > 0 {
		n := min(len(payloads), insertChunk)
		if _, err := q.sender.SendBatch(ctx, payloads[:n]); err != nil {
			return fmt.Errorf("queues: pgactor: %w", err)
		}
		payloads = payloads[n:]
	}
	return nil
}

func (q *pgactorQueue) Send(ctx context.Context, payload int64) error {
	_, err := q.sender.Send(ctx, payload)
	return err
}

func (q *pgactorQueue) Drained(ctx context.Context) (bool, error) {
	// A completed task's row is deleted in the statement that counts it.
	var any bool
	err := q.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+pgx.Identifier{q.o.Schema, "tasks"}.Sanitize()+")").Scan(&any)
	return !any, err
}

func (q *pgactorQueue) TableBytes(ctx context.Context) (int64, error) {
	return schemaBytes(ctx, q.pool, q.o.Schema)
}

func (q *pgactorQueue) ChildOptions() Options {
	o := q.o
	o.Attach = true
	return o
}

func (q *pgactorQueue) Close(ctx context.Context) error {
	err := q.sender.Close(ctx)
	if !q.o.Attach {
		err = errors.Join(err, dropSchema(ctx, q.pool, q.o.Schema))
	}
	return errors.Join(err, q.pool.Shutdown(ctx))
}
