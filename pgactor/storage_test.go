package pgactor

import (
	"context"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// TestBoundedStorage runs rounds of a steady load — a batch sent, worked
// down to nothing — on a server whose autovacuum is off, and checks that
// the tables stop growing after the first rounds: completed tasks are
// deleted, and maintenance vacuums the dead rows that leaves. It runs in
// a database of its own: another test's transaction open in the same
// database keeps VACUUM from removing anything newer than it, and the
// tables would grow as if maintenance never ran.
func TestBoundedStorage(t *testing.T) {
	r := newDatabaseRig(t)
	a := start(r, "steady", func(ctx context.Context, task actor.Task[int]) error { return nil },
		Config[int]{Workers: 8, MaintenanceInterval: 50 * time.Millisecond})
	const rounds, batch = 8, 800
	payloads := make([]int, batch)
	size := func() (tasks, counts int64) {
		if err := r.pool.QueryRow(context.Background(), `SELECT pg_total_relation_size($1), pg_total_relation_size($2)`,
			r.schema+".tasks", r.schema+".counts").Scan(&tasks, &counts); err != nil {
			t.Fatal(err)
		}
		return tasks, counts
	}
	vacuums := func() int {
		var n int
		if err := r.pool.QueryRow(context.Background(), `SELECT vacuum_count FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'tasks'`, r.schema).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var firstTasks, warmTasks, warmCounts int64
	for round := range rounds {
		before := vacuums()
		if _, err := a.SendBatch(t.Context(), payloads); err != nil {
			t.Fatal(err)
		}
		for i := range 20 { // and some on their own, as counter increments
			if _, err := a.Send(t.Context(), i); err != nil {
				t.Fatal(err)
			}
		}
		want := uint64((round + 1) * (batch + 20))
		eventually(t, 60*time.Second, "the round's tasks completed", func() bool { return stats(t, a).Completed == want })
		eventually(t, 30*time.Second, "maintenance vacuumed the round's dead rows", func() bool { return vacuums() > before })
		tasks, counts := size()
		t.Logf("round %d: tasks %d kB, counts %d kB", round, tasks/1024, counts/1024)
		// Without vacuum the tasks table grows by about a round's rows
		// each round, 2.75 times its size after round 1 by round 5 and
		// more than 3.5 times by the last. With it, the table ends where
		// its highest peak was (VACUUM does not truncate it), and the
		// peak depends on when the vacuums fell: one that ran in the
		// middle of a round leaves the rest of its dead rows for the
		// next round, which adds its own before the statistics that
		// start the next vacuum catch up (seen at 2.02 times on a loaded
		// machine). So it may reach twice its size after round 1 plus a
		// round's rows, which round 0 left it at. The counts
		// table gets a row per single send and per group of completions,
		// and is vacuumed once more than vacuumMinDead rows are dead as
		// the statistics collector, which lags by a second or so, counts
		// them: how big it gets before then depends on how the
		// completions grouped, and a loaded machine makes more, smaller
		// groups (a CI run saw it reach 248 kB in one round from 72 kB).
		// So it may also hold a few thresholds' worth of rows, some
		// 100 kB each.
		const countsSlack = 512 << 10
		switch round {
		case 0:
			firstTasks = tasks
		case 1:
			warmTasks, warmCounts = tasks, counts
		}
		if round > 1 && (tasks > warmTasks*2+firstTasks || counts > warmCounts*2+countsSlack) {
			t.Errorf("round %d: the tables grew to %d and %d bytes from %d and %d after round 1 (tasks %d after round 0)", round, tasks, counts, warmTasks, warmCounts, firstTasks)
		}
	}
	if n := r.count(`SELECT count(*) FROM {s}.tasks`); n != 0 {
		t.Errorf("%d completed tasks kept", n)
	}
}
