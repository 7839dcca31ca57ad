package pgpool

import (
	"context"
	"errors"
	"sync/atomic"
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
	cfg   *Config // a copy of the Config it was made with, as given
	clock *adapter.Clock

	maxConns      int
	prepare       func(context.Context, *pgx.Conn) (bool, error)
	shouldPing    func(context.Context, ShouldPingParams) bool
	afterRelease  func(*pgx.Conn) bool
	trackIdle     bool
	acquireTracer AcquireTracer
	releaseTracer ReleaseTracer

	// Counts that Stat reconciles with pgxpool's: takes whose context had
	// ended before they began, which actorpool does not count as canceled
	// (it counts waits), connections AcquireAllIdle took, which actorpool
	// counts as acquires and pgxpool does not, and takes that found no
	// idle connection and failed, which actorpool counts as empty and
	// pgxpool, counting only the takes that got one, does not.
	canceledEarly atomic.Int64
	idleSweeps    atomic.Int64
	emptyFailed   atomic.Int64
}

// ShouldPingParams is what Config.ShouldPing is told of a connection taken
// from the idle ones.
type ShouldPingParams struct {
	Conn         *pgx.Conn
	IdleDuration time.Duration
}

// New returns a pool for the connection string, as ParseConfig reads it;
// see NewWithConfig.
func New(ctx context.Context, connString string) (*Pool, error) {
	cfg, err := ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	return NewWithConfig(ctx, cfg)
}

// NewWithConfig returns a pool configured by cfg, which must have been
// made by ParseConfig. It does not connect, except for the connections
// MinConns and MinIdleConns ask for, opened in the background; it does
// not fail when the server is down. Connects see the values of ctx, but
// not its deadline or cancellation.
//
// The pool keeps a copy of cfg and of its ConnConfig: changing them
// afterwards changes nothing; Config.BeforeConnect is how each connect
// gets what changes, such as a rotated password.
func NewWithConfig(ctx context.Context, cfg *Config) (*Pool, error) {
	return newPool(ctx, cfg, adapter.IdleTick)
}

var errNotParsed = errors.New("pgpool: the Config was not made by ParseConfig, which sets its defaults: make it with ParseConfig and change it after")

// newPool is NewWithConfig with the period of the pool's clock; zero
// makes a clock that only a test ticks.
func newPool(ctx context.Context, cfg *Config, tick time.Duration) (*Pool, error) {
	if cfg == nil || !cfg.createdByParseConfig || cfg.ConnConfig == nil {
		return nil, errNotParsed
	}
	cfg = cfg.Copy()
	pc, err := cfg.poolConfig()
	if err != nil {
		return nil, err
	}
	p := &Pool{
		cfg:          cfg,
		maxConns:     pc.MaxObjects,
		prepare:      cfg.PrepareConn,
		shouldPing:   cfg.ShouldPing,
		afterRelease: cfg.AfterRelease,
		trackIdle:    cfg.ShouldPing != nil,
	}
	if p.prepare == nil && cfg.BeforeAcquire != nil {
		before := cfg.BeforeAcquire
		p.prepare = func(ctx context.Context, c *pgx.Conn) (bool, error) { return before(ctx, c), nil }
	}
	p.acquireTracer, _ = cfg.ConnConfig.Tracer.(AcquireTracer)
	p.releaseTracer, _ = cfg.ConnConfig.Tracer.(ReleaseTracer)
	p.clock = adapter.NewClock(tick)
	cc := cfg.ConnConfig.Copy()
	cc.ConnectTimeout = connectTimeout(cc)
	f := &factory{
		cc:            cc,
		beforeConnect: cfg.BeforeConnect,
		afterConnect:  cfg.AfterConnect,
		beforeClose:   cfg.BeforeClose,
		values:        ctx,
		clock:         p.clock,
		trackIdle:     p.trackIdle,
	}
	p.pool, err = actorpool.New[*pooledConn](f, pc)
	if err != nil {
		p.clock.Close()
		return nil, err
	}
	return p, nil
}

// Exec runs sql on a connection from the pool.
func (p *Pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	l, err := p.take(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer p.give(l)
	return l.Value().Exec(ctx, sql, args...)
}

// Query runs sql on a connection from the pool. The connection goes back
// to the pool when the rows are closed, read to the end, or a Scan or
// Values on them fails, which closes them. When the query fails, or gets
// no connection, the rows returned are not nil: they carry the error, so
// that pgx.CollectRows and rows.Err report it.
func (p *Pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	l, err := p.take(ctx)
	if err != nil {
		return errRows{err}, err
	}
	rows, err := l.Value().Query(ctx, sql, args...)
	if err != nil {
		p.give(l)
		return errRows{err}, err
	}
	return &poolRows{Rows: rows, p: p, lease: l}, nil
}

// QueryRow runs sql on a connection from the pool. The connection goes
// back to the pool when the row is scanned, even if a destination's
// scanner panics; an error taking it is returned by Scan.
func (p *Pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	l, err := p.take(ctx)
	if err != nil {
		return errRow{err}
	}
	return &poolRow{row: l.Value().QueryRow(ctx, sql, args...), p: p, lease: l}
}

// SendBatch sends the batch's queries on a connection from the pool. The
// connection goes back to the pool when the results are closed, unless the
// batch begins a transaction (pgx.Batch.BeginTx): then it goes back when
// the transaction that BatchResults.Tx returns is committed or rolled
// back.
func (p *Pool) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	l, err := p.take(ctx)
	if err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	br := &poolBatchResults{BatchResults: l.Value().SendBatch(ctx, b), p: p, lease: l}
	if tx := br.BatchResults.Tx(); tx != nil {
		br.tx = &Tx{t: tx, p: p, lease: l}
	}
	return br
}

// CopyFrom copies rows into a table with the COPY protocol, on a
// connection from the pool.
func (p *Pool) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	l, err := p.take(ctx)
	if err != nil {
		return 0, err
	}
	defer p.give(l)
	return l.Value().CopyFrom(ctx, table, columns, src)
}

// Begin starts a transaction on a connection from the pool, as a *Tx. The
// connection goes back to the pool when the transaction is committed or
// rolled back. ctx bounds the BEGIN only: the transaction is not rolled
// back when ctx ends.
func (p *Pool) Begin(ctx context.Context) (pgx.Tx, error) {
	return p.BeginTx(ctx, pgx.TxOptions{})
}

// BeginTx starts a transaction with opts on a connection from the pool,
// as Begin does.
func (p *Pool) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	l, err := p.take(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := l.Value().BeginTx(ctx, opts)
	if err != nil {
		p.give(l)
		return nil, err
	}
	return &Tx{t: tx, p: p, lease: l}, nil
}

// Ping takes a connection and pings the server on it.
func (p *Pool) Ping(ctx context.Context) error {
	l, err := p.take(ctx)
	if err != nil {
		return err
	}
	defer p.give(l)
	return l.Value().Ping(ctx)
}

// Close closes the pool: takes fail from now on, idle connections are
// closed at once and connections in use when they are given back. It
// waits for them all, however long they are held; Shutdown waits only
// until a context ends. A second call waits the same way.
func (p *Pool) Close() {
	p.pool.Close(context.Background())
	p.clock.Close()
}

// Shutdown is Close, waiting only until ctx ends for connections still in
// use: it then returns an error saying how many are out, and each is
// closed when given back. No goroutine of the pool is left once they are.
func (p *Pool) Shutdown(ctx context.Context) error {
	err := p.pool.Close(ctx)
	p.clock.Close()
	return err
}

// Reset closes every connection, and leaves the pool open: idle
// connections now, connections in use when they are given back. Use it
// after the server failed over, or after rotating credentials to have
// every session log in again: the connects that follow get what
// Config.BeforeConnect gives them then.
func (p *Pool) Reset() {
	p.pool.Reload(context.Background())
}

// Stat returns the pool's gauges and counters, as pgxpool's Stat does.
func (p *Pool) Stat() *Stat {
	// The sweeps and failed takes first: each is counted after actorpool
	// counted its take, so the counts read next include every one read
	// here, and no difference goes negative.
	sweeps, failed := p.idleSweeps.Load(), p.emptyFailed.Load()
	return &Stat{s: p.pool.Stats(), canceledEarly: p.canceledEarly.Load(), idleSweeps: sweeps, emptyFailed: failed}
}

// Stats returns every gauge and counter of the pool: wait and create
// errors, destroys by cause, leaks, and what Stat returns.
func (p *Pool) Stats() actorpool.Stats { return p.pool.Stats() }

// Config returns a copy of the Config the pool was made with.
func (p *Pool) Config() *Config { return p.cfg.Copy() }
