package pgpool

import (
	"context"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/adapter"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A Pool is a pool of connections to one PostgreSQL database. It is safe
// for use by many goroutines.
type Pool struct {
	pool  *actorpool.Pool[*pooledConn]
	cfg   Config
	clock *clock
}

// New returns a pool for the connection string, as ParseConfig reads it.
// It does not connect until a connection is asked for, except for
// pool_min_idle_conns connections, opened at once in the background: New
// does not fail when the server is down.
func New(connString string) (*Pool, error) {
	cfg, err := ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	return NewWithConfig(cfg)
}

// NewWithConfig returns a pool configured by cfg. The pool keeps a copy
// of cfg and of its ConnConfig: changing them afterwards changes nothing;
// Config.BeforeConnect is how each connect gets what changes, such as a
// rotated password.
func NewWithConfig(cfg *Config) (*Pool, error) { return newPool(cfg, idleTick) }

// newPool is NewWithConfig with the period of the pool's clock; zero
// makes a clock that only a test ticks.
func newPool(cfg *Config, tick time.Duration) (*Pool, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c.ConnConfig = c.ConnConfig.Copy()
	clk := newClock(tick)
	f := &factory{cc: c.ConnConfig, beforeConnect: c.BeforeConnect, afterConnect: c.AfterConnect, clock: clk}
	p, err := actorpool.New[*pooledConn](f, c.Pool)
	if err != nil {
		clk.close()
		return nil, err
	}
	return &Pool{pool: p, cfg: c, clock: clk}, nil
}

// Acquire takes a connection from the pool, waiting until one is free or
// ctx ends, for several statements on one connection. The caller must give
// it back with Conn.Release.
//
// It fails with actorpool.ErrClosed, actorpool.ErrPoolExhausted, an
// *actorpool.CreateError when connecting failed, or an
// *actorpool.WaitError when ctx ended first; errors.Is(err,
// context.DeadlineExceeded) reports the last.
func (p *Pool) Acquire(ctx context.Context) (*Conn, error) {
	l, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &Conn{lease: l, c: l.Value()}, nil
}

// AcquireFunc takes a connection, calls f with it, and gives it back, even
// when f panics.
func (p *Pool) AcquireFunc(ctx context.Context, f func(*Conn) error) error {
	c, err := p.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return f(c)
}

// With takes a connection, calls fn with it, and gives it back, even when
// fn panics. The pool's methods called with the context fn receives use
// the same connection — a With, Acquire, Exec or Query nested in fn runs
// on it — so code that takes a context need not know whether it runs
// inside a transaction begun on that connection.
func (p *Pool) With(ctx context.Context, fn func(ctx context.Context, c *Conn) error) error {
	return adapter.With(ctx, p.pool, p.Acquire, fn)
}

// Exec runs sql on a connection from the pool.
func (p *Pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	l, err := p.pool.Acquire(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer l.Release()
	return l.Value().Exec(ctx, sql, args...)
}

// Query runs sql on a connection from the pool. The connection goes back
// to the pool when the rows are closed, read to the end, or a Scan or
// Values on them fails, which closes them.
func (p *Pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	l, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := l.Value().Query(ctx, sql, args...)
	if err != nil {
		l.Release()
		return nil, err
	}
	return &poolRows{Rows: rows, lease: l}, nil
}

// QueryRow runs sql on a connection from the pool. The connection goes
// back to the pool when the row is scanned, even if a destination's
// scanner panics; an error taking it is returned by Scan.
func (p *Pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	l, err := p.pool.Acquire(ctx)
	if err != nil {
		return errRow{err}
	}
	return &poolRow{row: l.Value().QueryRow(ctx, sql, args...), lease: l}
}

// SendBatch sends the batch's queries on a connection from the pool. The
// connection goes back to the pool when the results are closed, unless the
// batch begins a transaction (pgx.Batch.BeginTx): then it goes back when
// the transaction that BatchResults.Tx returns is committed or rolled
// back.
func (p *Pool) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	l, err := p.pool.Acquire(ctx)
	if err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	br := &poolBatchResults{BatchResults: l.Value().SendBatch(ctx, b), lease: l}
	if tx := br.BatchResults.Tx(); tx != nil {
		br.tx = &poolTx{Tx: tx, lease: l}
	}
	return br
}

// CopyFrom copies rows into a table with the COPY protocol, on a
// connection from the pool.
func (p *Pool) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	l, err := p.pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer l.Release()
	return l.Value().CopyFrom(ctx, table, columns, src)
}

// Begin starts a transaction on a connection from the pool. The connection
// goes back to the pool when the transaction is committed or rolled back.
func (p *Pool) Begin(ctx context.Context) (pgx.Tx, error) {
	return p.BeginTx(ctx, pgx.TxOptions{})
}

// BeginTx starts a transaction with opts on a connection from the pool.
// The connection goes back to the pool when the transaction is committed
// or rolled back.
func (p *Pool) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	l, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := l.Value().BeginTx(ctx, opts)
	if err != nil {
		l.Release()
		return nil, err
	}
	return &poolTx{Tx: tx, lease: l}, nil
}

// Ping takes a connection and pings the server on it.
func (p *Pool) Ping(ctx context.Context) error {
	l, err := p.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer l.Release()
	return l.Value().Ping(ctx)
}

// Close closes the pool: takes fail from now on, idle connections are
// closed at once and connections in use when they are given back. It
// waits for them until ctx ends; see actorpool.Pool.Close.
func (p *Pool) Close(ctx context.Context) error {
	err := p.pool.Close(ctx)
	p.clock.close()
	return err
}

// Reload replaces every connection: idle ones now, ones in use when they
// are given back. Use it after the server failed over, or after rotating
// credentials to have every session log in again: the connects that
// follow get what Config.BeforeConnect gives them then. (A session already
// open outlives a change of its role's password on the server.)
func (p *Pool) Reload(ctx context.Context) error { return p.pool.Reload(ctx) }

// Stats returns the pool's gauges and counters.
func (p *Pool) Stats() actorpool.Stats { return p.pool.Stats() }

// Config returns a copy of the pool's configuration, with defaults filled
// in; its ConnConfig is a copy too (pgx.ConnConfig.Copy), so changing it
// changes nothing in the pool.
func (p *Pool) Config() *Config {
	c := p.cfg
	c.ConnConfig = p.cfg.ConnConfig.Copy()
	return &c
}
