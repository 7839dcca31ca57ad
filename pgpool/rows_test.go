package pgpool

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// panicScanner is a destination whose scanner panics.
type panicScanner struct{}

var errScannerPanic = errors.New("scanner panicked")

func (*panicScanner) Scan(any) error { panic(errScannerPanic) }

// checkFree checks, right after a call that should have given back the
// only connection of a pool of one, that it did, and that the next caller
// gets it at once, not when the garbage collector finds the lease.
func checkFree(t *testing.T, p *Pool) {
	t.Helper()
	if st := p.Stats(); st.InUse != 0 {
		t.Fatalf("in use: %d, want 0: the connection was not given back", st.InUse)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	if err := p.QueryRow(ctx, "SELECT 2").Scan(&n); err != nil || n != 2 {
		t.Fatalf("next query on a pool of one: %d, %v; want 2", n, err)
	}
}

// TestPostgresQueryRowPanic checks that a panic in QueryRow's Scan gives
// the connection back, to be closed since its result was not read, and
// goes on to the caller.
func TestPostgresQueryRowPanic(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	p := newPGPool(t, dsn, testName(), func(c *Config) { c.MaxConns = 1 })
	func() {
		defer func() {
			if v := recover(); v != errScannerPanic {
				t.Fatalf("recovered %v, want the scanner's panic", v)
			}
		}()
		var d panicScanner
		p.QueryRow(context.Background(), "SELECT 1").Scan(&d)
	}()
	checkFree(t, p)
	if st := p.Stats(); st.DestroyedBy.Invalid != 1 {
		t.Errorf("destroyed as invalid: %d, want 1: the connection given back with its result unread", st.DestroyedBy.Invalid)
	}
}

// failingInt4 decodes no int4 value, to make Rows.Values fail.
type failingInt4 struct{ pgtype.Int4Codec }

var errDecode = errors.New("int4 refused by the test")

func (failingInt4) DecodeValue(*pgtype.Map, uint32, int16, []byte) (any, error) {
	return nil, errDecode
}

// TestPostgresRowsErrorGivesBack checks that a failed Scan or Values,
// which closes pgx's rows, gives the connection back, for a caller who
// returns on the error without closing the rows, and that the connection
// is kept: pgx read its result to the end.
func TestPostgresRowsErrorGivesBack(t *testing.T) {
	dsn := testenv.Postgres(t)
	tests := []struct {
		name  string
		query string
		read  func(rows pgx.Rows) error
	}{
		{"Scan into the wrong type", "SELECT 'not a number' FROM generate_series(1, 3)", func(rows pgx.Rows) error {
			var n int
			return rows.Scan(&n)
		}},
		{"Scan into too few destinations", "SELECT 1, 2 FROM generate_series(1, 3)", func(rows pgx.Rows) error {
			var n int
			return rows.Scan(&n)
		}},
		{"Values of an undecodable row", "SELECT 1::int4 FROM generate_series(1, 3)", func(rows pgx.Rows) error {
			_, err := rows.Values()
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testenv.CheckGoroutines(t)
			p := newPGPool(t, dsn, testName(), func(c *Config) {
				c.MaxConns = 1
				c.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
					conn.TypeMap().RegisterType(&pgtype.Type{Name: "int4", OID: pgtype.Int4OID, Codec: failingInt4{}})
					return nil
				}
			})
			rows, err := p.Query(context.Background(), tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if !rows.Next() {
				t.Fatalf("no row: %v", rows.Err())
			}
			err = tt.read(rows)
			if err == nil {
				t.Fatal("the read succeeded")
			}
			// The caller returns here, without rows.Close.
			checkFree(t, p)
			if rows.Next() {
				t.Error("Next after the failed read: true, want false")
			}
			if rows.Err() == nil {
				t.Errorf("Err after the failed read: nil, want %v", err)
			}
			rows.Close() // a late deferred Close does nothing more
			if st := p.Stats(); st.InUse != 0 || st.Created != 1 || st.Destroyed != 0 {
				t.Errorf("in use %d, created %d, destroyed %d; want 0, 1 and 0: one connection, given back once and kept", st.InUse, st.Created, st.Destroyed)
			}
		})
	}
}

// TestQueryErrorRows checks that Query never returns nil rows: rows that
// failed, or got no connection, carry the error, so that the idiom of
// pgx's documentation — rows, _ := pool.Query(...) then pgx.CollectRows or
// rows.Close — reports it instead of panicking, as with pgxpool.
func TestQueryErrorRows(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	closed := newPGPool(t, dsn, testName(), nil)
	closed.Close()
	tests := []struct {
		name string
		p    *Pool
		ctx  context.Context
		sql  string
		want error // nil: any error
	}{
		{"context ended", newPGPool(t, dsn, testName(), nil), canceled, "SELECT 1", context.Canceled},
		{"pool closed", closed, context.Background(), "SELECT 1", actorpool.ErrClosed},
		{"bad SQL", newPGPool(t, dsn, testName(), nil), context.Background(), "SELEKT 1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, qerr := tt.p.Query(tt.ctx, tt.sql)
			if rows == nil {
				t.Fatalf("Query returned nil rows (error %v)", qerr)
			}
			nums, err := pgx.CollectRows(rows, pgx.RowTo[int32])
			if err == nil || qerr == nil || err.Error() != qerr.Error() || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Errorf("CollectRows = %v, %v; Query's error %v; want the same error, matching %v", nums, err, qerr, tt.want)
			}
			if rows.Err() == nil {
				t.Error("rows.Err() = nil, want the query's error")
			}
			rows.Close()
			if st := tt.p.Stats(); st.InUse != 0 {
				t.Errorf("%d connections in use after a failed Query", st.InUse)
			}
		})
	}
}

// TestPostgresQueryRowScanTwice checks that scanning QueryRow's row a
// second time gives nothing back again and does not panic, with every
// hook that give consults set, as pgxpool's Row tolerates it.
func TestPostgresQueryRowScanTwice(t *testing.T) {
	dsn := testenv.Postgres(t)
	tracer := &countingTracer{}
	var afterRelease atomic.Int32
	p := newPGPool(t, dsn, testName(), func(c *Config) {
		c.MaxConns = 1
		c.ConnConfig.Tracer = tracer
		c.ShouldPing = func(context.Context, ShouldPingParams) bool { return false }
		c.AfterRelease = func(*pgx.Conn) bool { afterRelease.Add(1); return true }
	})
	ctx := context.Background()
	row := p.QueryRow(ctx, "SELECT 1")
	var n int
	if err := row.Scan(&n); err != nil || n != 1 {
		t.Fatalf("Scan = %d, %v; want 1", n, err)
	}
	if err := row.Scan(&n); err == nil {
		t.Errorf("second Scan = nil, want an error")
	}
	if r := tracer.releases.Load(); r != 1 {
		t.Errorf("traced %d releases, want 1", r)
	}
	testenv.Eventually(t, 10*time.Second, "the connection to be idle", func() bool { return p.Stat().IdleConns() == 1 })
	if a := afterRelease.Load(); a != 1 {
		t.Errorf("AfterRelease called %d times, want 1", a)
	}
	checkFree(t, p)
}
