package servers

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/actorpool/actorpool/pgpool"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// The queries of the PostgreSQL cells.
const (
	select1SQL = "SELECT 1"
	lookupSQL  = "SELECT v FROM actorpool_bench_kv WHERE id = $1"
)

// preparePostgres creates actorpool_bench_kv with rows 0 to KeySpace-1,
// row i holding Values[i], and no other row. Two processes may prepare it
// at once (go test runs packages in parallel), and concurrent CREATE TABLE
// IF NOT EXISTS can fail on PostgreSQL's catalog: an advisory lock held
// for the transaction puts them one after the other.
func preparePostgres(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("preparing PostgreSQL: connect: %w", err)
	}
	defer conn.Close(context.Background())
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{"SELECT pg_advisory_xact_lock(7245031)", nil},
			{"CREATE TABLE IF NOT EXISTS actorpool_bench_kv (id int PRIMARY KEY, v text NOT NULL)", nil},
			// Rewrites only rows that differ, so that a second run writes
			// nothing.
			{`INSERT INTO actorpool_bench_kv (id, v) SELECT g, 'v' || g FROM generate_series(0, $1 - 1) g
			  ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v WHERE actorpool_bench_kv.v IS DISTINCT FROM EXCLUDED.v`, []any{KeySpace}},
			{"DELETE FROM actorpool_bench_kv WHERE id < 0 OR id >= $1", []any{KeySpace}},
		} {
			if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
				return fmt.Errorf("%.40s…: %w", q.sql, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("preparing PostgreSQL's table actorpool_bench_kv: %w", err)
	}
	return nil
}

// A row is what QueryRow returns in pgx and database/sql alike.
type row interface{ Scan(dest ...any) error }

// usePostgres runs both queries with queryRow, on one connection, and
// checks their answers: it warms a connection (pgx prepares and caches
// each statement on first use).
func usePostgres(ctx context.Context, queryRow func(ctx context.Context, sql string, args ...any) row) error {
	var n int
	if err := queryRow(ctx, select1SQL).Scan(&n); err != nil {
		return fmt.Errorf("%s: %w", select1SQL, err)
	}
	if n != 1 {
		return fmt.Errorf("%s returned %d", select1SQL, n)
	}
	var v string
	if err := queryRow(ctx, lookupSQL, 0).Scan(&v); err != nil {
		return fmt.Errorf("lookup of row 0: %w", err)
	}
	if v != Values[0] {
		return fmt.Errorf("lookup of row 0 returned %q, want %q", v, Values[0])
	}
	return nil
}

// notFound wraps ErrNotFound around err when err is pgx's or database/sql's
// ErrNoRows (pgx's is also database/sql's), and returns it as it is
// otherwise.
func notFound(err error, id int) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("row %d: %w (%w)", id, ErrNotFound, err)
	}
	return err
}

// A pgxQuerier is what pgpool.Pool and pgxpool.Pool have in common for
// the two queries: the same QueryRow.
type pgxQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func pgxSelect1(ctx context.Context, q pgxQuerier) (int, error) {
	var n int
	err := q.QueryRow(ctx, select1SQL).Scan(&n)
	return n, err
}

func pgxLookup(ctx context.Context, q pgxQuerier, id int) (string, error) {
	var v string
	err := q.QueryRow(ctx, lookupSQL, id).Scan(&v)
	return v, notFound(err, id)
}

// A pgxConn is a connection taken from pgpool or pgxpool.
type pgxConn interface {
	pgxQuerier
	Release()
}

// warmPgx warms n connections taken with acquire, from pgpool or pgxpool.
func warmPgx[C pgxConn](ctx context.Context, n int, acquire func(context.Context) (C, error)) error {
	return warm(ctx, n, func(ctx context.Context) (func() error, func(), error) {
		c, err := acquire(ctx)
		if err != nil {
			return nil, nil, err
		}
		return func() error {
			return usePostgres(ctx, func(ctx context.Context, sql string, args ...any) row { return c.QueryRow(ctx, sql, args...) })
		}, c.Release, nil
	})
}

// pgpoolPool is ours: actorpool's pgpool.
type pgpoolPool struct{ p *pgpool.Pool }

// newPgpool returns a pgpool.Pool of size connections, every other setting
// at the defaults ParseConfig gives, which are pgxpool's.
func newPgpool(dsn string, size int, dial Dialer) (Pool, error) {
	cfg, err := pgpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(size)
	setDial(cfg.ConnConfig, dial)
	p, err := pgpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	return &pgpoolPool{p: p}, nil
}

func (a *pgpoolPool) Select1(ctx context.Context) (int, error) {
	return pgxSelect1(ctx, a.p)
}

func (a *pgpoolPool) Lookup(ctx context.Context, id int) (string, error) {
	return pgxLookup(ctx, a.p, id)
}

func (a *pgpoolPool) Warm(ctx context.Context, n int) error {
	return warmPgx(ctx, n, a.p.Acquire)
}

func (a *pgpoolPool) Open() int    { return a.p.Stats().Total }
func (a *pgpoolPool) Close() error { return a.p.Shutdown(context.Background()) }

// pgxPool is pgx's own pool, pgxpool.
type pgxPool struct{ p *pgxpool.Pool }

// newPgxpool returns a pgxpool.Pool with MaxConns size, every other
// setting at its default.
func newPgxpool(dsn string, size int, dial Dialer) (Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(size)
	setDial(cfg.ConnConfig, dial)
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	return &pgxPool{p: p}, nil
}

func (a *pgxPool) Select1(ctx context.Context) (int, error) {
	return pgxSelect1(ctx, a.p)
}

func (a *pgxPool) Lookup(ctx context.Context, id int) (string, error) {
	return pgxLookup(ctx, a.p, id)
}

func (a *pgxPool) Warm(ctx context.Context, n int) error {
	return warmPgx(ctx, n, a.p.Acquire)
}

func (a *pgxPool) Open() int    { return int(a.p.Stat().TotalConns()) }
func (a *pgxPool) Close() error { a.p.Close(); return nil }

// sqlPool is database/sql's pool over pgx's stdlib driver.
type sqlPool struct{ db *sql.DB }

// newSQL opens a database/sql DB with pgx's driver, MaxOpenConns and
// MaxIdleConns both size: the default of two idle connections would have
// it close and reopen connections all the time, which is not what a tuned
// service runs.
func newSQL(dsn string, size int, dial Dialer) (Pool, error) {
	db, err := openSQL(dsn, dial)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(size)
	db.SetMaxIdleConns(size)
	return &sqlPool{db: db}, nil
}

// openSQL opens dsn with pgx's driver: by its name, as most programs do,
// or, to give it a dialer, through a connector over a config of its own.
func openSQL(dsn string, dial Dialer) (*sql.DB, error) {
	if dial == nil {
		return sql.Open("pgx", dsn)
	}
	cc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	setDial(cc, dial)
	return stdlib.OpenDB(*cc), nil
}

func (a *sqlPool) Select1(ctx context.Context) (int, error) {
	var n int
	err := a.db.QueryRowContext(ctx, select1SQL).Scan(&n)
	return n, err
}

func (a *sqlPool) Lookup(ctx context.Context, id int) (string, error) {
	var v string
	err := a.db.QueryRowContext(ctx, lookupSQL, id).Scan(&v)
	return v, notFound(err, id)
}

func (a *sqlPool) Warm(ctx context.Context, n int) error {
	return warm(ctx, n, func(ctx context.Context) (func() error, func(), error) {
		c, err := a.db.Conn(ctx)
		if err != nil {
			return nil, nil, err
		}
		return func() error {
			return usePostgres(ctx, func(ctx context.Context, sql string, args ...any) row { return c.QueryRowContext(ctx, sql, args...) })
		}, func() { c.Close() }, nil
	})
}

func (a *sqlPool) Open() int    { return a.db.Stats().OpenConnections }
func (a *sqlPool) Close() error { return a.db.Close() }

// setDial has pgx open the connections of cc with dial, when dial is not
// nil.
func setDial(cc *pgx.ConnConfig, dial Dialer) {
	if dial != nil {
		cc.DialFunc = pgconn.DialFunc(dial)
	}
}
