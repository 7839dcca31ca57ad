package queues

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// riverArgs is the job's arguments: the payload.
type riverArgs struct {
	Payload int64 `json:"p"`
}

// Kind is the job's kind in River.
func (riverArgs) Kind() string { return "bench" }

// riverWorker calls run with each job's payload and succeeds.
type riverWorker struct {
	river.WorkerDefaults[riverArgs]
	run func(int64)
}

// Work runs the job.
func (w *riverWorker) Work(ctx context.Context, j *river.Job[riverArgs]) error {
	w.run(j.Args.Payload)
	return nil
}

// riverQueue is River with its pgx v5 driver on a pgxpool.Pool.
type riverQueue struct {
	k      Kind
	o      Options
	pool   *pgxpool.Pool
	driver *riverpgxv5.Driver
	client *river.Client[pgx.Tx] // an insert-only client
}

// riverbench's fetch settings, from its source: "When benchmarking to
// maximize job throughput these numbers have an outsized effect on
// results."
const (
	riverbenchFetchCooldown     = 2 * time.Millisecond
	riverbenchFetchPollInterval = 20 * time.Millisecond
)

func openRiver(ctx context.Context, k Kind, o Options) (*riverQueue, error) {
	cfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		return nil, fmt.Errorf("queues: river: %w", err)
	}
	cfg.MaxConns = int32(o.conns())
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("queues: river: %w", err)
	}
	q := &riverQueue{k: k, o: o, pool: pool, driver: riverpgxv5.New(pool)}
	if err := q.open(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("queues: river: %w", err)
	}
	return q, nil
}

func (q *riverQueue) open(ctx context.Context) error {
	if !q.o.Attach {
		if err := dropSchema(ctx, q.pool, q.o.Schema); err != nil {
			return err
		}
		if _, err := q.pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{q.o.Schema}.Sanitize()); err != nil {
			return err
		}
		m, err := rivermigrate.New(q.driver, &rivermigrate.Config{Schema: q.o.Schema, Logger: quiet()})
		if err != nil {
			return err
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return err
		}
	}
	c, err := river.NewClient(q.driver, &river.Config{Schema: q.o.Schema, Logger: quiet()})
	if err != nil {
		return err
	}
	q.client = c
	return nil
}

func (q *riverQueue) Start(ctx context.Context, workers int, run func(int64)) (func(context.Context) error, error) {
	ws := river.NewWorkers()
	if err := river.AddWorkerSafely(ws, &riverWorker{run: run}); err != nil {
		return nil, fmt.Errorf("queues: river: %w", err)
	}
	cfg := &river.Config{
		Schema:               q.o.Schema,
		Logger:               quiet(),
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		Workers:              ws,
		RescueStuckJobsAfter: q.o.Rescue,
	}
	if !q.k.RiverDefaults {
		cfg.FetchCooldown = riverbenchFetchCooldown
		cfg.FetchPollInterval = riverbenchFetchPollInterval
	}
	if q.o.Rescue > 0 && q.o.Rescue < river.JobTimeoutDefault {
		// River refuses a rescue sooner than the job timeout; the job
		// timeout then is the rescue time less a second, as a user
		// setting a short rescue would do.
		cfg.JobTimeout = max(q.o.Rescue-time.Second, q.o.Rescue/2)
	}
	c, err := river.NewClient(q.driver, cfg)
	if err != nil {
		return nil, fmt.Errorf("queues: river: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("queues: river: %w", err)
	}
	return c.Stop, nil
}

func (q *riverQueue) InsertBatch(ctx context.Context, payloads []int64) error {
	params := make([]river.InsertManyParams, 0, min(len(payloads), insertChunk))
	for len(payloads) > 0 {
		n := min(len(payloads), insertChunk)
		params = params[:0]
		for _, p := range payloads[:n] {
			params = append(params, river.InsertManyParams{Args: riverArgs{Payload: p}})
		}
		if _, err := q.client.InsertMany(ctx, params); err != nil {
			return fmt.Errorf("queues: river: %w", err)
		}
		payloads = payloads[n:]
	}
	return nil
}

func (q *riverQueue) Send(ctx context.Context, payload int64) error {
	_, err := q.client.Insert(ctx, riverArgs{Payload: payload}, nil)
	return err
}

func (q *riverQueue) Drained(ctx context.Context) (bool, error) {
	// River keeps completed jobs (for a day by default); a job is done
	// when its completion has moved it out of available and running.
	var any bool
	err := q.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+pgx.Identifier{q.o.Schema, "river_job"}.Sanitize()+
		" WHERE state IN ('available', 'running', 'retryable', 'scheduled', 'pending'))").Scan(&any)
	return !any, err
}

func (q *riverQueue) TableBytes(ctx context.Context) (int64, error) {
	return schemaBytes(ctx, q.pool, q.o.Schema)
}

func (q *riverQueue) ChildOptions() Options {
	o := q.o
	o.Attach = true
	return o
}

func (q *riverQueue) Close(ctx context.Context) error {
	var err error
	if !q.o.Attach {
		err = dropSchema(ctx, q.pool, q.o.Schema)
	}
	q.pool.Close()
	return err
}
