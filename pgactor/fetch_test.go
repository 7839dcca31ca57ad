package pgactor

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestFetchScansNoTable checks that a fetch from a long, analyzed queue
// reaches the tasks it takes through the fetch index and their ctids,
// never by scanning the table. Once the table had statistics, the planner
// took a fetch's LIMIT for a tenth of the table and joined the update to
// the picked rows by hashing a sequential scan of every row: a busy queue
// ran at half the throughput it has without statistics, which is to say
// on every server whose autovacuum is on.
func TestFetchScansNoTable(t *testing.T) {
	r := newRig(t)
	r.exec(`INSERT INTO {s}.tasks (actor, type, payload, available_at)
		SELECT 'long', 'int', '1', now() - interval '1 second' FROM generate_series(1, 20000)`)
	r.exec(`ANALYZE {s}.tasks`)

	ctx := context.Background()
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// The counts of this connection's scans not yet sent to the
	// statistics collector, which include earlier transactions'.
	seqScans := func() (n int64) {
		if err := tx.QueryRow(ctx, `SELECT seq_scan FROM pg_stat_xact_user_tables WHERE schemaname = $1 AND relname = 'tasks'`, r.schema).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := seqScans()
	if n := fetchTasks(t, tx, r.schema, "long", 100); n != 100 {
		t.Fatalf("fetched %d tasks, want 100", n)
	}
	seq := seqScans() - before
	if seq != 0 {
		t.Errorf("a fetch of 100 tasks scanned the table of 20,000 %d times, want none", seq)
	}
}

// TestFetchPlannedOnce checks that a connection plans the fetch once, not
// at every call. A SQL function's body is parsed and planned again at
// each call; that was a fifth of a busy queue's fetch (perf of a
// burn-down on PostgreSQL 15), and a fetch is most of what a queue costs
// its server. The server reports each planning to a client that asks for
// log_planner_stats at client_min_messages log.
func TestFetchPlannedOnce(t *testing.T) {
	r := newRig(t)
	r.exec(`INSERT INTO {s}.tasks (actor, type, payload, available_at)
		SELECT 'plans', 'int', '1', now() - interval '1 second' FROM generate_series(1, 400)`)

	ctx := context.Background()
	var plans atomic.Int64
	conn := connectNoticed(t, r.dsn, func(n *pgconn.Notice) {
		if n.Message == "PLANNER STATISTICS" {
			plans.Add(1)
		}
	})
	if _, err := conn.Exec(ctx, `SET client_min_messages = log; SET log_planner_stats = on`); err != nil {
		t.Fatal(err)
	}
	fetch := func() {
		t.Helper()
		if n := fetchTasks(t, conn, r.schema, "plans", 10); n != 10 {
			t.Fatalf("fetched %d tasks, want 10", n)
		}
	}
	// The first calls plan the fetch, and the server makes custom plans of
	// the prepared call itself for its first five executions.
	for range 8 {
		fetch()
	}
	if plans.Load() == 0 {
		t.Fatal("the server reported no planning: the test cannot see plans")
	}
	before := plans.Load()
	for range 20 {
		fetch()
	}
	if n := plans.Load() - before; n != 0 {
		t.Errorf("20 fetches on one connection planned %d times, want none: the fetch is planned at every call", n)
	}
}

// TestFetchNotCompiled checks that the server never compiles the fetch's
// statements to machine code. The fetch's plan is made without its
// limit's value, which the planner then takes for a tenth of the table:
// on a queue of some 250,000 tasks the estimate passed jit_above_cost, and
// every fetch spent 30-35 ms compiling before a run of 2-3 ms. The test
// lowers jit_above_cost to 0 rather than fill a table that large, and
// reads the plans of the fetch's statements through auto_explain.
func TestFetchNotCompiled(t *testing.T) {
	r := newRig(t)
	r.exec(`INSERT INTO {s}.tasks (actor, type, payload, available_at)
		SELECT 'jit', 'int', '1', now() - interval '1 second' FROM generate_series(1, 100)`)

	ctx := context.Background()
	var mu sync.Mutex
	var plans []string
	conn := connectNoticed(t, r.dsn, func(n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		plans = append(plans, n.Message)
	})
	var jit bool
	if err := conn.QueryRow(ctx, `SELECT pg_jit_available()`).Scan(&jit); err != nil {
		t.Fatal(err)
	}
	if !jit {
		t.Skip("this server cannot compile queries (pg_jit_available is false), so it cannot compile the fetch either")
	}
	for _, set := range []string{
		`LOAD 'auto_explain'`,
		`SET auto_explain.log_min_duration = 0`,
		`SET auto_explain.log_nested_statements = on`,
		`SET client_min_messages = log`,
		`SET jit = on`,
		`SET jit_above_cost = 0`,
	} {
		if _, err := conn.Exec(ctx, set); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
	}
	if n := fetchTasks(t, conn, r.schema, "jit", 10); n != 10 {
		t.Fatalf("fetched %d tasks, want 10", n)
	}

	mu.Lock()
	defer mu.Unlock()
	var fetch int
	for _, p := range plans {
		if !strings.Contains(p, `"`+r.schema+`".tasks`) {
			continue // the call itself, which the session's settings compile
		}
		fetch++
		if strings.Contains(p, "JIT:") {
			t.Errorf("the server compiled a statement of the fetch:\n%s", p)
		}
	}
	if fetch == 0 {
		t.Fatalf("auto_explain showed no plan of the fetch's statements; it showed %d others: %q", len(plans), plans)
	}
}

// connectNoticed opens a connection to dsn, closed when the test ends,
// that hands every notice the server sends to notice.
func connectNoticed(t *testing.T, dsn string, notice func(*pgconn.Notice)) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notice(n) }
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// fetchTasks runs the pump's fetch of up to limit tasks of actor in
// schema on db, as owner "worker" with a lease of 5 s, and returns how
// many it took.
func fetchTasks(t *testing.T, db Querier, schema, actor string, limit int) int {
	t.Helper()
	rows, err := db.Query(context.Background(), stmtFetch.in(schema), actor, limit, "worker", int64(5_000_000))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
