package pgactor

import (
	"context"
	"testing"
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
	rows, err := tx.Query(ctx, stmtFetch.in(r.schema), "long", 100, "worker", int64(5_000_000))
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
	if n != 100 {
		t.Fatalf("fetched %d tasks, want 100", n)
	}
	seq := seqScans() - before
	if seq != 0 {
		t.Errorf("a fetch of 100 tasks scanned the table of 20,000 %d times, want none", seq)
	}
}
