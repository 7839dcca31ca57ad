package pgactor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// planNode is a node of EXPLAIN (FORMAT JSON)'s plan.
type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Cond     string     `json:"Index Cond"`
	Plans    []planNode `json:"Plans"`
}

// walk calls fn for n and each node below it.
func (n planNode) walk(fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}

// tree returns n and the nodes below it, one a line.
func (n planNode) tree(indent string) string {
	s := indent + n.NodeType + " " + n.Relation + " " + n.Index + "\n"
	for _, c := range n.Plans {
		s += c.tree(indent + "  ")
	}
	return s
}

// sortsLittle reports whether the sort n sorts only what a part pruned
// by a false condition returns (nothing), the live tasks found by their
// unique key (at most one per actor), or, when few is set, the live tasks
// of one actor read by the fetch's index, which the planner takes for an
// actor with few tasks instead of walking the primary key past every
// other actor's.
func sortsLittle(n planNode, few bool) bool {
	little := true
	n.walk(func(c planNode) {
		switch {
		case c.Relation == "":
		case c.Relation == "actors":
		case c.Relation == "tasks" && c.Index == "tasks_unique_key":
		case few && c.Relation == "tasks" && c.Index == "tasks_fetch" && strings.Contains(c.Cond, "actor ="):
		default:
			little = false
		}
	})
	return little
}

// paramTypes are the types of the listing statements' parameters, for
// PREPARE.
var paramTypes = map[string]string{
	"actor": "text", "after": "bigint", "key": "text", "since": "timestamptz",
	"until": "timestamptz", "states": "text[]", "limit": "bigint",
}

// TestTasksUseIndexes checks that a page of tasks, with each filter, is
// read through indexes in id order — no table scanned whole, nothing
// sorted but one small actor's tasks (sortsLittle) — from tables of 200,000 tasks and 50,000 dead letters with
// statistics, in the custom plans of the first executions of a prepared
// statement and in the generic plan PostgreSQL may switch to after five.
func TestTasksUseIndexes(t *testing.T) {
	r := newRig(t)
	// 20 actors; every 7th task keyed, every 5th scheduled, every 11th
	// running, their enqueued times spread over 200,000 seconds.
	r.exec(`INSERT INTO {s}.tasks (actor, type, payload, available_at, enqueued_at, unique_key, owner, attempt)
		SELECT 'a' || (i % 20), 'int', '1',
			CASE WHEN i % 5 = 0 THEN now() + interval '1 hour' ELSE now() - interval '1 second' END,
			now() - (200000 - i) * interval '1 second',
			CASE WHEN i % 7 = 0 THEN 'k' || i END,
			CASE WHEN i % 11 = 0 THEN 'w' END, (i % 11 = 0)::int
		FROM generate_series(1, 200000) i`)
	r.exec(`INSERT INTO {s}.dead_letters (id, actor, type, payload, priority, enqueued_at, runs, attempts, lost, reason, unique_key)
		SELECT 1000000 + i, 'a' || (i % 20), 'int', '1', 0, now() - (50000 - i) * interval '1 second', 1, 1, 0, 'permanent error',
			CASE WHEN i % 7 = 0 THEN 'k' || i END
		FROM generate_series(1, 50000) i`)
	r.exec(`INSERT INTO {s}.tasks (actor, type, payload, available_at) SELECT 'rare', 'int', '1', now() FROM generate_series(1, 10)`)
	r.exec(`INSERT INTO {s}.actors (name) SELECT 'a' || i FROM generate_series(0, 19) i UNION ALL SELECT 'rare'`)
	r.exec(`ANALYZE {s}.tasks`)
	r.exec(`ANALYZE {s}.dead_letters`)

	now := time.Now()
	for _, tt := range []struct {
		name string
		f    TaskFilter
	}{
		{"everything", TaskFilter{}},
		{"after", TaskFilter{After: 150000}},
		{"actor", TaskFilter{Actor: "a3"}},
		{"actor after", TaskFilter{Actor: "a3", After: 150000}},
		{"queued", TaskFilter{States: []TaskState{TaskQueued}}},
		{"actor running", TaskFilter{Actor: "a3", States: []TaskState{TaskRunning}}},
		{"actor scheduled retrying", TaskFilter{Actor: "a3", States: []TaskState{TaskScheduled, TaskRetrying}}},
		{"actor dead", TaskFilter{Actor: "a3", States: []TaskState{TaskDead}}},
		{"key", TaskFilter{Key: "k7"}},
		{"actor key", TaskFilter{Actor: "a7", Key: "k7"}},
		{"since", TaskFilter{Since: now.Add(-time.Hour)}},
		{"actor until", TaskFilter{Actor: "a3", Until: now.Add(-time.Hour)}},
		{"rare actor", TaskFilter{Actor: "rare"}},
		{"rare actor queued", TaskFilter{Actor: "rare", States: []TaskState{TaskQueued}}},
		{"actor since until", TaskFilter{Actor: "a3", Since: now.Add(-2 * time.Hour), Until: now.Add(-time.Hour), Limit: 1000}},
	} {
		st, args := listStatement(tt.f, 101)
		types := make([]string, len(st.params))
		for i, p := range st.params {
			types[i] = paramTypes[p]
		}
		// EXECUTE takes no parameters of its own: the values are written
		// in, as a custom plan sees them.
		literals := make([]string, len(args))
		for i, a := range args {
			literals[i] = sqlLiteral(t, a)
		}
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				ctx := context.Background()
				tx, err := r.pool.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback(ctx)
				for _, sql := range []string{
					stmtListPlan.text,
					"SET LOCAL plan_cache_mode = " + mode,
					"PREPARE list_page(" + strings.Join(types, ", ") + ") AS " + st.in(r.schema),
				} {
					if _, err := tx.Exec(ctx, sql); err != nil {
						t.Fatalf("%s: %v", sql, err)
					}
				}
				defer tx.Exec(ctx, "DEALLOCATE list_page")
				var out []struct{ Plan planNode }
				if err := tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) EXECUTE list_page("+strings.Join(literals, ", ")+")").Scan(&out); err != nil {
					t.Fatal(err)
				}
				indexed := 0
				out[0].Plan.walk(func(n planNode) {
					switch n.NodeType {
					case "Seq Scan", "Bitmap Heap Scan":
						t.Errorf("scans table %s whole (%s)", n.Relation, n.NodeType)
					case "Sort", "Incremental Sort":
						if !sortsLittle(n, tt.f.Actor == "rare") {
							t.Errorf("sorts the rows of a scan (%s)", n.NodeType)
						}
					case "Index Scan", "Index Only Scan":
						indexed++
					}
				})
				if indexed == 0 {
					t.Error("reads no index")
				}
				if t.Failed() {
					t.Logf("plan:\n%s", out[0].Plan.tree(""))
				}
			})
		}
	}
}

// sqlLiteral writes v, an argument of a listing statement, as SQL.
func sqlLiteral(t *testing.T, v any) string {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch v := v.(type) {
	case nil:
		return "NULL"
	case int64, int:
		return fmt.Sprint(v)
	case *string:
		if v == nil {
			return "NULL"
		}
		return quote(*v)
	case string:
		return quote(v)
	case *time.Time:
		if v == nil {
			return "NULL"
		}
		return quote(v.Format(time.RFC3339Nano))
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = quote(s)
		}
		return "ARRAY[" + strings.Join(q, ", ") + "]::text[]"
	}
	t.Fatalf("no literal for %T", v)
	return ""
}

// TestRunAgain checks which errors runAgain runs a statement again after,
// and that it gives up after runTries tries, or once the context is done.
func TestRunAgain(t *testing.T) {
	deadlock := &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
	serialization := fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "40001"})
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name  string
		ctx   context.Context
		errs  []error // what each try returns; nil once they run out
		tries int
		ok    bool
	}{
		{"success", context.Background(), nil, 1, true},
		{"after a deadlock", context.Background(), []error{deadlock}, 2, true},
		{"after serialization failures", context.Background(), []error{serialization, serialization, deadlock}, 4, true},
		{"another error", context.Background(), []error{&pgconn.PgError{Code: "23505"}}, 1, false},
		{"not PostgreSQL's", context.Background(), []error{errors.New("cut off")}, 1, false},
		{"context done", canceled, []error{deadlock}, 1, false},
		{"too many", context.Background(), slices.Repeat([]error{deadlock}, runTries+1), runTries, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tries := 0
			v, err := runAgain(tt.ctx, func() (int, error) {
				tries++
				if tries <= len(tt.errs) {
					return 0, tt.errs[tries-1]
				}
				return 7, nil
			})
			if tries != tt.tries || (err == nil) != tt.ok || tt.ok && v != 7 {
				t.Errorf("runAgain tried %d times and returned %d, %v; want %d tries, ok %v", tries, v, err, tt.tries, tt.ok)
			}
			if tt.name == "too many" && !errors.Is(err, deadlock) {
				t.Errorf("runAgain's error after %d tries does not wrap the last: %v", runTries, err)
			}
		})
	}
}
