package pgactor

import (
	"context"
	"testing"
	"time"
)

func TestTableCare(t *testing.T) {
	const never = 1e6 * time.Second
	tests := []struct {
		name                string
		dead, live, changed int64
		sinceAnalyze        time.Duration
		vacuum, analyze     bool
	}{
		{"quiet", 10, 100, 10, never, false, false},
		{"few dead rows", vacuumMinDead, 0, 0, never, false, false},
		{"dead rows past the floor", vacuumMinDead + 1, 0, 0, never, true, false},
		{"dead rows under a fifth of the live", 1500, 10000, 0, never, false, false},
		{"dead rows over a fifth of the live", 2500, 10000, 0, never, true, false},
		{"changed, never analyzed", 0, 10000, 1500, never, false, true},
		{"changed, under a tenth", 0, 100000, 5000, never, false, false},
		{"changed, analyzed just now", 0, 10000, 1500, time.Second, false, false},
		{"changed, analyzed a while ago", 0, 10000, 1500, analyzeEvery, false, true},
		// A busy queue: its rows die and change by the thousand every
		// round; VACUUM every round, ANALYZE once a minute.
		{"busy, analyzed just now", 30000, 20000, 60000, 10 * time.Second, true, false},
		{"busy, analyzed a minute ago", 30000, 20000, 60000, analyzeEvery, true, true},
	}
	for _, tt := range tests {
		vacuum, analyze := tableCare(tt.dead, tt.live, tt.changed, tt.sinceAnalyze)
		if vacuum != tt.vacuum || analyze != tt.analyze {
			t.Errorf("%s: tableCare(%d, %d, %d, %v) = %v, %v; want %v, %v",
				tt.name, tt.dead, tt.live, tt.changed, tt.sinceAnalyze, vacuum, analyze, tt.vacuum, tt.analyze)
		}
	}
}

func TestMaintainPace(t *testing.T) {
	const every = time.Second
	type round struct {
		at   time.Duration // when it ends, from the start
		dead int64         // the most dead rows it vacuumed
		want time.Duration // the interval to the next
	}
	tests := []struct {
		name   string
		rounds []round
	}{
		{"no vacuum", []round{{every, 0, every}}},
		{"a small vacuum", []round{{every, vacuumMinDead, every}}},
		{"at the budget", []round{{every, vacuumBudget, every}}},
		{"twice the budget", []round{{every, 2 * vacuumBudget, every / 2}}},
		{"four times the budget", []round{{every, 4 * vacuumBudget, every / 4}}},
		{"past eight times the budget", []round{{every, 100 * vacuumBudget, every / 8}}},
		// The statistics a round reads lag: most of the rounds that come
		// sooner find few dead rows reported, and vacuum nothing.
		{"a steady churn", []round{
			{every, 4 * vacuumBudget, every / 4},
			{every + every/4, 0, every / 4},
			{every + every/2, 0, every / 4},
			{every + 3*every/4, 4 * vacuumBudget, every / 4},
			{2*every + every/4, 0, every / 4},
			{2*every + every/2, 0, every / 4},
		}},
		{"the churn stops", []round{
			{every, 4 * vacuumBudget, every / 4},
			{every + every/4, 0, every / 4},
			{every + every/2, 0, every / 4},
			{every + 3*every/4, 0, every / 4},
			{2 * every, 0, every},
		}},
		{"a smaller churn", []round{
			{every, 8 * vacuumBudget, every / 8},
			{every + every/8, 2 * vacuumBudget, every / 2},
			{every + every/8 + every/2, 0, every / 2},
			{2*every + every/8 + every/2, 0, every},
		}},
	}
	start := time.Now()
	for _, tt := range tests {
		c := &maintainPace{every: every}
		for i, r := range tt.rounds {
			if got := c.next(start.Add(r.at), r.dead); got != r.want {
				t.Errorf("%s, round %d (at %v, %d dead rows vacuumed): next round in %v, want %v", tt.name, i, r.at, r.dead, got, r.want)
			}
		}
	}
}

// TestVacuumLeavesTruncation checks that maintenance's VACUUM does not try
// to cut the empty pages off the end of the tasks table. That needs the
// table's exclusive lock: while any statement holds a lock on the table,
// as a busy queue's always do, VACUUM waits up to five seconds for it —
// a sustained run saw vacuums of 3 and 4 s, the dead rows piling up
// meanwhile — and once it has it, it holds up every fetch and completion
// while it checks the pages. The pages stay for the rows to come.
func TestVacuumLeavesTruncation(t *testing.T) {
	r := newRig(t)
	a := start(r, "emptied", nil, Config[int]{MaintenanceInterval: time.Hour})
	if _, err := a.SendBatch(t.Context(), make([]int, 30000)); err != nil {
		t.Fatal(err)
	}
	r.exec(`DELETE FROM {s}.tasks`)

	// A reader's lock, as a fetch holds, for as long as the VACUUM runs.
	tx, err := r.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), expand(r.schema, `SELECT count(*) FROM {s}.tasks`)); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() {
		_, err := a.store.care(t.Context(), "tasks", true, false)
		done <- err
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
		if n := r.count(`SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'VacuumTruncate' AND query LIKE 'VACUUM%' || $1 || '%'`, r.schema); n > 0 {
			t.Fatal("VACUUM waits for the lock to truncate the table")
		}
	}
}
