package pgpool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/adapter"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var testSeq atomic.Int64

// testName returns a name no other test run uses, for tables and
// application names.
func testName() string {
	return fmt.Sprintf("actorpool_test_%d_%d", time.Now().UnixNano(), testSeq.Add(1))
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// newPGPool returns a pool on dsn whose connections carry name as their
// application_name, with pool set by tune, closed when t ends.
func newPGPool(t testing.TB, dsn, name string, tune func(c *Config)) *Pool {
	t.Helper()
	return openPGPool(t, dsn, name, adapter.IdleTick, tune)
}

// newPGPoolStill is newPGPool with a clock that ticks only when the test
// calls p.clock.Tick.
func newPGPoolStill(t testing.TB, dsn, name string, tune func(c *Config)) *Pool {
	t.Helper()
	return openPGPool(t, dsn, name, 0, tune)
}

func openPGPool(t testing.TB, dsn, name string, tick time.Duration, tune func(c *Config)) *Pool {
	t.Helper()
	cfg, err := ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = name
	cfg.Pool.Logger = testLogger(t)
	if tune != nil {
		tune(cfg)
	}
	p, err := newPool(context.Background(), cfg, tick)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CloseAtEnd(t, 20*time.Second, p.Shutdown)
	return p
}

// admin returns a plain pgx connection for the test's own look-ups.
func admin(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// backends returns the process ids of the server's sessions named name.
func backends(t testing.TB, adm *pgx.Conn, name string) []uint32 {
	t.Helper()
	rows, _ := adm.Query(context.Background(), `SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid`, name)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[uint32])
	if err != nil {
		t.Fatal(err)
	}
	return pids
}

func pid(t *testing.T, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, ctx context.Context) uint32 {
	t.Helper()
	var n uint32
	if err := q.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// createTable creates a table named name, dropped when t ends.
func createTable(t *testing.T, adm *pgx.Conn, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := adm.Exec(ctx, "CREATE TABLE "+name+" (id int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adm.Exec(context.Background(), "DROP TABLE "+name) })
}

func TestPostgresQueries(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	name := testName()
	adm := admin(t, dsn)
	createTable(t, adm, name)
	p := newPGPool(t, dsn, name, func(c *Config) { c.MaxConns = 2 })
	ctx := context.Background()

	if _, err := p.Exec(ctx, "INSERT INTO "+name+" VALUES (1, 'one'), (2, 'two')"); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := p.QueryRow(ctx, "SELECT v FROM "+name+" WHERE id = $1", 2).Scan(&v); err != nil || v != "two" {
		t.Errorf("QueryRow = %q, %v; want two", v, err)
	}
	if err := p.QueryRow(ctx, "SELECT v FROM "+name+" WHERE id = 99").Scan(&v); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("QueryRow with no row: %v, want pgx.ErrNoRows", err)
	}
	rows, _ := p.Query(ctx, "SELECT id FROM "+name+" ORDER BY id")
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil || !slices.Equal(ids, []int32{1, 2}) {
		t.Errorf("Query = %v, %v; want [1 2]", ids, err)
	}
	// Rows read to the end give the connection back without Close.
	rows, err = p.Query(ctx, "SELECT id FROM "+name)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	var pgErr *pgconn.PgError
	if _, err := p.Query(ctx, "SELEC 1"); !errors.As(err, &pgErr) || pgErr.Code != "42601" {
		t.Errorf("Query with a syntax error: %v, want SQLSTATE 42601", err)
	}

	b := &pgx.Batch{}
	b.Queue("INSERT INTO " + name + " VALUES (3, 'three')")
	b.Queue("SELECT count(*) FROM " + name)
	br := p.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		t.Error(err)
	}
	var n int
	if err := br.QueryRow().Scan(&n); err != nil || n != 3 {
		t.Errorf("batch count = %d, %v; want 3", n, err)
	}
	if err := br.Close(); err != nil {
		t.Error(err)
	}
	// A batch that begins a transaction gives the connection back with
	// the transaction.
	b = &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	b.Queue("INSERT INTO " + name + " VALUES (4, 'four')")
	br = p.SendBatch(ctx, b)
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.InUse != 1 {
		t.Errorf("in use after closing a batch with a transaction: %d, want 1 (the transaction's)", st.InUse)
	}
	if err := br.Tx().Commit(ctx); err != nil {
		t.Fatal(err)
	}

	copied, err := p.CopyFrom(ctx, pgx.Identifier{name}, []string{"id", "v"}, pgx.CopyFromRows([][]any{{5, "five"}, {6, "six"}}))
	if err != nil || copied != 2 {
		t.Errorf("CopyFrom = %d, %v; want 2", copied, err)
	}

	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx.Exec(ctx, "INSERT INTO "+name+" VALUES (7, 'seven')")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tx.Rollback(ctx) // the usual deferred Rollback, after Commit: harmless
	tx, err = p.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+name+" VALUES (8, 'eight')"); !errors.As(err, &pgErr) || pgErr.Code != "25006" {
		t.Errorf("INSERT in a read-only transaction: %v, want SQLSTATE 25006", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Ping(ctx); err != nil {
		t.Error(err)
	}

	// Several statements on one connection.
	err = p.AcquireFunc(ctx, func(c *Conn) error {
		if _, err := c.Exec(ctx, "SET LOCAL statement_timeout = '5s'"); err != nil {
			return err
		}
		return c.QueryRow(ctx, "SELECT count(*) FROM "+name).Scan(&n)
	})
	if err != nil || n != 7 {
		t.Errorf("count = %d, %v; want 7", n, err)
	}

	st := p.Stats()
	if st.InUse != 0 || st.Destroyed != 0 || st.Created > 2 {
		t.Errorf("in use %d, destroyed %d, created %d; want 0, 0 and at most 2: every call gave its connection back, fit for reuse", st.InUse, st.Destroyed, st.Created)
	}
}

// TestPostgresNotReused checks that a connection given back closed, busy or
// inside a transaction is not handed to the next caller, and that what the
// abandoned transaction did is rolled back.
func TestPostgresNotReused(t *testing.T) {
	dsn := testenv.Postgres(t)
	adm := admin(t, dsn)
	table := testName()
	createTable(t, adm, table)
	insert := "INSERT INTO " + table + " VALUES (1, 'abandoned')"
	ctx := context.Background()
	tests := []struct {
		name  string
		use   func(t *testing.T, c *Conn)
		reuse bool
	}{
		{"clean", func(t *testing.T, c *Conn) { c.Exec(ctx, "SELECT 1") }, true},
		{"rolled back", func(t *testing.T, c *Conn) {
			tx, _ := c.Begin(ctx)
			tx.Exec(ctx, insert)
			tx.Rollback(ctx)
		}, true},
		{"open transaction", func(t *testing.T, c *Conn) {
			c.Exec(ctx, "BEGIN")
			c.Exec(ctx, insert)
		}, false},
		{"pgx.Tx neither committed nor rolled back", func(t *testing.T, c *Conn) {
			tx, _ := c.Begin(ctx)
			tx.Exec(ctx, insert)
		}, false},
		{"failed transaction", func(t *testing.T, c *Conn) {
			c.Exec(ctx, "BEGIN")
			c.Exec(ctx, insert)
			if _, err := c.Exec(ctx, "SELECT 1/0"); err == nil {
				t.Fatal("1/0 succeeded")
			}
		}, false},
		{"rows not closed", func(t *testing.T, c *Conn) {
			rows, _ := c.Query(ctx, "SELECT generate_series(1, 100000)")
			rows.Next()
		}, false},
		{"closed", func(t *testing.T, c *Conn) { c.Conn().Close(ctx) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testenv.CheckGoroutines(t)
			p := newPGPool(t, dsn, testName(), func(c *Config) { c.MaxConns = 1 })
			c, err := p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			first := pid(t, c, ctx)
			tt.use(t, c)
			c.Release()

			c, err = p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Release()
			if next := pid(t, c, ctx); (next == first) != tt.reuse {
				t.Errorf("next caller got backend %d, the first had %d; want reused: %v", next, first, tt.reuse)
			}
			if s := c.Conn().PgConn().TxStatus(); s != 'I' {
				t.Errorf("next caller's connection has transaction status %c, want I", s)
			}
			var n int
			if err := c.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil || n != 0 {
				t.Errorf("rows in the table: %d, %v; want 0: the abandoned transaction was rolled back", n, err)
			}
			want := int64(1)
			if tt.reuse {
				want = 0
			}
			if st := p.Stats(); st.DestroyedBy.Invalid != want {
				t.Errorf("destroyed as invalid: %d, want %d", st.DestroyedBy.Invalid, want)
			}
		})
	}
}

// TestPostgresWithNests checks that the pool's methods called with a With
// callback's context run on the callback's connection, so code that takes
// a context joins the caller's transaction.
func TestPostgresWithNests(t *testing.T) {
	dsn := testenv.Postgres(t)
	name := testName()
	adm := admin(t, dsn)
	createTable(t, adm, name)
	p := newPGPool(t, dsn, name, func(c *Config) { c.MaxConns = 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	insert := func(ctx context.Context, id int) error {
		_, err := p.Exec(ctx, "INSERT INTO "+name+" VALUES ($1, 'x')", id)
		return err
	}
	err := p.With(ctx, func(ctx context.Context, conn *Conn) error {
		if got, want := pid(t, p, ctx), pid(t, conn, ctx); got != want {
			t.Errorf("QueryRow inside With ran on backend %d, With holds %d", got, want)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		if err := insert(ctx, 1); err != nil {
			return err
		}
		return nil // rolled back: the insert, made in the transaction, goes too
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := p.QueryRow(ctx, "SELECT count(*) FROM "+name).Scan(&n); err != nil || n != 0 {
		t.Errorf("rows after the rolled-back With: %d, %v; want 0", n, err)
	}
}

// TestPostgresTestPings checks that idle connections are pinged every
// ValidationInterval and kept when they answer.
func TestPostgresTestPings(t *testing.T) {
	dsn := testenv.Postgres(t)
	p := newPGPool(t, dsn, testName(), func(c *Config) {
		c.MaxConns, c.MinIdleConns, c.HealthCheckPeriod = 2, 2, 10*time.Millisecond
	})
	testenv.Eventually(t, 20*time.Second, "both connections and pings", func() bool {
		st := p.Stats()
		return st.Created >= 2 && st.Tests >= 6
	})
	if st := p.Stats(); st.Destroyed != 0 || st.Created != 2 {
		t.Errorf("created %d, destroyed %d; want 2, 0", st.Created, st.Destroyed)
	}
}

// TestPostgresAfterConnect checks that AfterConnect runs on each new
// connection, and that its error fails the create and closes the
// connection.
func TestPostgresAfterConnect(t *testing.T) {
	dsn := testenv.Postgres(t)
	ctx := context.Background()
	p := newPGPool(t, dsn, testName(), func(c *Config) {
		c.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
			_, err := conn.Exec(ctx, "SET search_path = pg_catalog, public")
			return err
		}
	})
	var path string
	if err := p.QueryRow(ctx, "SHOW search_path").Scan(&path); err != nil || path != "pg_catalog, public" {
		t.Errorf("search_path = %q, %v; want the one AfterConnect set", path, err)
	}

	name := testName()
	refuse := errors.New("refused by AfterConnect")
	p = newPGPool(t, dsn, name, func(c *Config) {
		c.AfterConnect = func(context.Context, *pgx.Conn) error { return refuse }
	})
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := p.Ping(ctx); err != refuse {
		t.Errorf("Ping: %v, want AfterConnect's error itself, as pgxpool returns it", err)
	}
	adm := admin(t, dsn)
	testenv.Eventually(t, 20*time.Second, "refused connections to be closed", func() bool { return len(backends(t, adm, name)) == 0 })
}

// TestPostgresHealthCheckKeepsMinIdleConns checks that the health check's
// pings do not make the pool open connections past MinIdleConns: pgxpool
// keeps MinIdleConns idle, not more, and a connection under its ping is
// still idle.
func TestPostgresHealthCheckKeepsMinIdleConns(t *testing.T) {
	dsn := testenv.Postgres(t)
	p := newPGPool(t, dsn, testName(), func(c *Config) {
		c.MaxConns, c.MinIdleConns, c.HealthCheckPeriod = 10, 2, 10*time.Millisecond
	})
	testenv.Eventually(t, 20*time.Second, "the idle connections and 20 pings", func() bool {
		st := p.Stats()
		return st.Created >= 2 && st.Tests >= 20
	})
	if n := p.Stat().NewConnsCount(); n != 2 {
		t.Errorf("NewConnsCount = %d after 20 health check pings, want MinIdleConns, 2", n)
	}
	if n := p.Stat().TotalConns(); n != 2 {
		t.Errorf("TotalConns = %d, want MinIdleConns, 2", n)
	}
}
