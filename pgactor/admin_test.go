package pgactor

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool/pgpool"
	"github.com/jackc/pgx/v5"
)

// newAdmin returns an Admin of the rig's schema.
func (r *rig) admin() *Admin {
	r.t.Helper()
	a, err := NewAdmin(r.t.Context(), r.pool, r.schema)
	if err != nil {
		r.t.Fatal(err)
	}
	return a
}

// TestNewAdmin checks that NewAdmin refuses a nil pool, a bad schema name
// and a schema not migrated, saying so, and takes "" for DefaultSchema.
func TestNewAdmin(t *testing.T) {
	r := newRig(t)
	for _, tt := range []struct {
		name   string
		nilled bool
		schema string
		want   string
		is     error
	}{
		{name: "migrated", schema: r.schema},
		{name: "nil pool", nilled: true, schema: r.schema, want: "the pool is nil"},
		{name: "bad name", schema: "Bad-Name", want: "want 1 to 63 lower-case letters"},
		{name: "not migrated", schema: "pgactor_never_migrated", want: "run pgactor.Migrate", is: ErrNoSchema},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pool := r.pool
			if tt.nilled {
				pool = nil
			}
			a, err := NewAdmin(t.Context(), pool, tt.schema)
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want == "" && a.Schema() != tt.schema:
				t.Errorf("Schema() = %q, want %q", a.Schema(), tt.schema)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err = %v, want one saying %q", err, tt.want)
			case tt.is != nil && !errors.Is(err, tt.is):
				t.Errorf("err = %v, want one wrapping %v", err, tt.is)
			}
		})
	}
	// "" is DefaultSchema, whatever its version on this server.
	v, err := Version(context.Background(), r.pool, DefaultSchema)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAdmin(t.Context(), r.pool, "")
	switch {
	case v >= SchemaVersion && (err != nil || a.Schema() != DefaultSchema):
		t.Errorf("NewAdmin(ctx, pool, \"\") = %v, %v; want the Admin of %q", a, err, DefaultSchema)
	case v < SchemaVersion && (!errors.Is(err, ErrNoSchema) || !strings.Contains(err.Error(), `"`+DefaultSchema+`"`)):
		t.Errorf("NewAdmin(ctx, pool, \"\") with %q at version %d: err = %v, want ErrNoSchema naming it", DefaultSchema, v, err)
	}
}

// TestAdminTaskStates puts a task in each state the tables know and
// checks the state Task reports, and the fields that say it; then that an
// unknown ID, and another actor's task for an Actor, are ErrNoTask.
func TestAdminTaskStates(t *testing.T) {
	r := newRig(t)
	admin := r.admin()
	for _, tt := range []struct {
		put   taskState
		want  TaskState
		owner string
	}{
		{stateQueued, TaskQueued, ""},
		{stateScheduled, TaskScheduled, ""},
		{stateRetrying, TaskRetrying, ""},
		{stateRunning, TaskRunning, "this"},
		{stateExpired, TaskRunning, "this"},
		{stateCanceling, TaskCanceling, "this"},
		{stateDead, TaskDead, ""},
	} {
		t.Run(tt.put.String(), func(t *testing.T) {
			c := &moveCase{t: t, r: r, s: &store{pool: r.pool, schema: r.schema, actor: "states_" + tt.put.String(), owner: "this"}}
			c.put(tt.put)
			got, err := admin.Task(context.Background(), uint64(c.lease.id))
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != uint64(c.lease.id) || got.Actor != c.s.actor || got.State != tt.want || got.Owner != tt.owner ||
				got.Type != "int" || string(got.Payload) != "1" || got.Runs != 2 {
				t.Errorf("Task = %+v, want ID %d of %s, state %s, owner %q, type int, payload 1, runs 2", got, c.lease.id, c.s.actor, tt.want, tt.owner)
			}
			if dead := tt.want == TaskDead; dead != (got.Reason == "canceled" && !got.DeadAt.IsZero() && got.RunAt.IsZero()) {
				t.Errorf("Task = %+v: a dead letter has a reason and DeadAt and no RunAt, and only a dead letter", got)
			}
		})
	}
	if _, err := admin.Task(context.Background(), 1<<40); !errors.Is(err, ErrNoTask) {
		t.Errorf("Task(unknown) = %v, want ErrNoTask", err)
	}
	other := start[int](r, "states_other", nil, Config[int]{})
	c := &moveCase{t: t, r: r, s: &store{pool: r.pool, schema: r.schema, actor: "states_mine"}}
	c.put(stateQueued)
	if _, err := other.Task(context.Background(), uint64(c.lease.id)); !errors.Is(err, ErrNoTask) {
		t.Errorf("Actor.Task(another actor's task) = %v, want ErrNoTask", err)
	}
}

// ids returns the IDs of a page's tasks.
func ids(p TaskPage) []uint64 {
	var out []uint64
	for _, t := range p.Tasks {
		out = append(out, t.ID)
	}
	return out
}

// TestAdminTasks lists tasks of two actors in every state with each
// filter, and pages through them.
func TestAdminTasks(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	admin := r.admin()
	p := start[int](r, "list_p", nil, Config[int]{})
	q := start[int](r, "list_q", nil, Config[int]{})
	send := func(a *Actor[int], opts ...SendOption) uint64 { return mustSend(t, a, opts...) }
	queued := send(p)
	scheduled := send(p, After(time.Hour))
	keyed := send(p, UniqueKey("k1"))
	running := send(p)
	r.exec(`UPDATE {s}.tasks SET owner = 'w', attempt = 1, available_at = now() + interval '1 hour' WHERE id = $1`, running)
	dead := send(p)
	if n, err := p.Cancel(ctx, dead); n != 1 || err != nil {
		t.Fatalf("Cancel = %d, %v", n, err)
	}
	old := send(p)
	r.exec(`UPDATE {s}.tasks SET enqueued_at = now() - interval '2 hours' WHERE id = $1`, old)
	qs := []uint64{send(q), send(q, UniqueKey("k1"))}
	all := []uint64{queued, scheduled, keyed, running, dead, old, qs[0], qs[1]}
	slices.Sort(all)
	hourAgo := time.Now().Add(-time.Hour)

	for _, tt := range []struct {
		name string
		f    TaskFilter
		want []uint64
	}{
		{"everything", TaskFilter{}, all},
		{"actor", TaskFilter{Actor: "list_p"}, []uint64{queued, scheduled, keyed, running, dead, old}},
		{"unknown actor", TaskFilter{Actor: "nobody"}, nil},
		{"queued", TaskFilter{Actor: "list_p", States: []TaskState{TaskQueued}}, []uint64{queued, keyed, old}},
		{"scheduled, running", TaskFilter{States: []TaskState{TaskScheduled, TaskRunning}}, []uint64{scheduled, running}},
		{"dead", TaskFilter{States: []TaskState{TaskDead}}, []uint64{dead}},
		{"key", TaskFilter{Key: "k1"}, []uint64{keyed, qs[1]}},
		{"actor key", TaskFilter{Actor: "list_q", Key: "k1"}, []uint64{qs[1]}},
		{"actor key dead", TaskFilter{Actor: "list_p", Key: "k1", States: []TaskState{TaskDead}}, nil},
		{"until", TaskFilter{Until: hourAgo}, []uint64{old}},
		{"since", TaskFilter{Actor: "list_p", Since: hourAgo}, []uint64{queued, scheduled, keyed, running, dead}},
		{"after", TaskFilter{After: keyed}, all[slices.Index(all, keyed)+1:]},
		{"limit", TaskFilter{Limit: 3}, all[:3]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			page, err := admin.Tasks(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(page); !slices.Equal(got, tt.want) {
				t.Errorf("Tasks(%+v) = %v, want %v", tt.f, got, tt.want)
			}
			if tt.f.Actor != "" {
				a := map[string]*Actor[int]{"list_p": p, "list_q": q}[tt.f.Actor]
				if a == nil {
					return
				}
				f := tt.f
				f.Actor = ""
				page, err := a.Tasks(ctx, f)
				if got := ids(page); err != nil || !slices.Equal(got, tt.want) {
					t.Errorf("%s.Tasks(%+v) = %v, %v, want %v", a.Name(), f, got, err, tt.want)
				}
			}
		})
	}

	// Page by page, two at a time: every task once, in order, and the
	// last page says it is.
	var got []uint64
	f := TaskFilter{Limit: 2}
	for pages := 0; ; pages++ {
		if pages > len(all) {
			t.Fatalf("more than %d pages", len(all))
		}
		page, err := admin.Tasks(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(page)...)
		if page.Next == 0 {
			break
		}
		if page.Next != page.Tasks[len(page.Tasks)-1].ID {
			t.Errorf("Next = %d, want the page's last ID %d", page.Next, page.Tasks[len(page.Tasks)-1].ID)
		}
		f.After = page.Next
	}
	if !slices.Equal(got, all) {
		t.Errorf("paged %v, want %v", got, all)
	}
}

// TestAdminTasksRefused checks that a bad filter is refused through the
// Admin and the Actor, with ErrBadFilter.
func TestAdminTasksRefused(t *testing.T) {
	r := newRig(t)
	a := start[int](r, "refused", nil, Config[int]{})
	for _, f := range []TaskFilter{{Limit: MaxTaskLimit + 1}, {States: []TaskState{"lost"}}} {
		if _, err := r.admin().Tasks(context.Background(), f); !errors.Is(err, ErrBadFilter) {
			t.Errorf("Admin.Tasks(%+v) = %v, want ErrBadFilter", f, err)
		}
		if _, err := a.Tasks(context.Background(), f); !errors.Is(err, ErrBadFilter) {
			t.Errorf("Actor.Tasks(%+v) = %v, want ErrBadFilter", f, err)
		}
	}
}

// TestAdminRunNowDelete checks which tasks RunNow moves and Delete
// deletes, through the Admin and the Actor, and that Stats' identity
// holds after a delete.
func TestAdminRunNowDelete(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	admin := r.admin()
	p := start[int](r, "runnow_p", nil, Config[int]{})
	q := start[int](r, "runnow_q", nil, Config[int]{})
	send := func(a *Actor[int], opts ...SendOption) uint64 { return mustSend(t, a, opts...) }
	scheduled, queued, running, dead := send(p, After(time.Hour)), send(p), send(p), send(p)
	r.exec(`UPDATE {s}.tasks SET owner = 'w', attempt = 1, available_at = now() + interval '1 hour' WHERE id = $1`, running)
	if _, err := p.Cancel(ctx, dead); err != nil {
		t.Fatal(err)
	}
	other := send(q, After(time.Hour))
	const unknown = 1 << 40

	moved, err := admin.RunNow(ctx, scheduled, queued, running, dead, other, unknown)
	if want := []uint64{scheduled, queued, other}; err != nil || !slices.Equal(moved, want) {
		t.Errorf("Admin.RunNow = %v, %v, want %v", moved, err, want)
	}
	for id, want := range map[uint64]TaskState{scheduled: TaskQueued, queued: TaskQueued, running: TaskRunning, dead: TaskDead, other: TaskQueued} {
		if got, err := admin.Task(ctx, id); err != nil || got.State != want {
			t.Errorf("task %d after RunNow: %s, %v, want %s", id, got.State, err, want)
		}
	}
	later := send(q, After(time.Hour))
	moved, err = p.RunNow(ctx, later, running)
	if err != nil || len(moved) != 0 {
		t.Errorf("p.RunNow(q's task, a running task) = %v, %v, want none", moved, err)
	}

	deleted, err := admin.Delete(ctx, scheduled, running, dead, unknown)
	if want := []uint64{scheduled, dead}; err != nil || !slices.Equal(deleted, want) {
		t.Errorf("Admin.Delete = %v, %v, want %v", deleted, err, want)
	}
	if got, err := admin.Task(ctx, running); err != nil || got.State != TaskRunning {
		t.Errorf("the running task after Delete: %+v, %v; want it running", got, err)
	}
	deleted, err = q.Delete(ctx, queued, later)
	if want := []uint64{later}; err != nil || !slices.Equal(deleted, want) {
		t.Errorf("q.Delete(p's task, q's task) = %v, %v, want %v", deleted, err, want)
	}
	s := stats(t, p)
	if s.Accepted != 4 || s.DeadLettered != 2 || s.DeadLetters != 0 || s.Queued != 1 || s.Running != 1 {
		t.Errorf("p's stats after deletes: %+v; want 4 accepted, 2 dead-lettered, none stored, 1 queued, 1 running", s)
	}
	stats(t, q)
}

// TestAdminCancelReplay cancels and replays tasks of two actors through
// one Admin.
func TestAdminCancelReplay(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	admin := r.admin()
	p := start[int](r, "cancel_p", nil, Config[int]{})
	q := start[int](r, "cancel_q", nil, Config[int]{})
	a, _ := p.Send(ctx, 1)
	b, _ := q.Send(ctx, 2)
	if n, err := admin.Cancel(ctx, a, b, 1<<40); n != 2 || err != nil {
		t.Fatalf("Cancel = %d, %v, want 2", n, err)
	}
	for _, id := range []uint64{a, b} {
		if got, _ := admin.Task(ctx, id); got.State != TaskDead || got.Reason != ReasonCanceled.String() {
			t.Errorf("task %d after Cancel: %+v", id, got)
		}
	}
	replayed, err := admin.Replay(ctx, a, b)
	if want := []uint64{a, b}; err != nil || !slices.Equal(replayed, want) {
		t.Errorf("Replay = %v, %v, want %v", replayed, err, want)
	}
	for _, id := range []uint64{a, b} {
		if got, _ := admin.Task(ctx, id); got.State != TaskQueued {
			t.Errorf("task %d after Replay: %+v", id, got)
		}
	}
}

// TestAdminPause checks Pause, Resume, Actors and Stats.Paused, and that
// an unknown actor is ErrUnknownActor and registers nothing.
func TestAdminPause(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	admin := r.admin()
	start[int](r, "pause_a", nil, Config[int]{})
	b := start[int](r, "pause_b", nil, Config[int]{})
	for name, op := range map[string]func(context.Context, string) error{"Pause": admin.Pause, "Resume": admin.Resume} {
		if err := op(ctx, "nobody"); !errors.Is(err, ErrUnknownActor) || !strings.Contains(err.Error(), `"nobody"`) {
			t.Errorf("%s(nobody) = %v, want ErrUnknownActor naming it", name, err)
		}
	}
	if _, err := admin.Stats(ctx, "nobody"); !errors.Is(err, ErrUnknownActor) {
		t.Errorf("Stats(nobody) = %v, want ErrUnknownActor", err)
	}
	if n := r.count(`SELECT count(*) FROM {s}.actors`); n != 2 {
		t.Errorf("%d actors registered, want 2", n)
	}

	paused := func() map[string]time.Time {
		t.Helper()
		infos, err := admin.Actors(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]time.Time{}
		for _, in := range infos {
			if in.Paused != in.Stats.Paused || in.Paused == in.PausedAt.IsZero() {
				t.Errorf("ActorInfo %+v: Paused, Stats.Paused and PausedAt disagree", in)
			}
			if in.Paused {
				out[in.Name] = in.PausedAt
			}
		}
		if len(infos) != 2 || infos[0].Name != "pause_a" || infos[1].Name != "pause_b" {
			t.Errorf("Actors = %+v, want pause_a and pause_b", infos)
		}
		return out
	}
	if got := paused(); len(got) != 0 {
		t.Errorf("paused before Pause: %v", got)
	}
	if err := admin.Pause(ctx, "pause_a"); err != nil {
		t.Fatal(err)
	}
	first := paused()
	if _, ok := first["pause_a"]; !ok || len(first) != 1 {
		t.Errorf("paused after Pause(pause_a): %v", first)
	}
	if err := admin.Pause(ctx, "pause_a"); err != nil {
		t.Fatal(err)
	}
	if again := paused(); !again["pause_a"].Equal(first["pause_a"]) {
		t.Errorf("a second Pause moved PausedAt from %v to %v", first["pause_a"], again["pause_a"])
	}
	if err := b.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if s := stats(t, b); !s.Paused {
		t.Errorf("b's Stats after b.Pause: %+v, want Paused", s)
	}
	if err := admin.Resume(ctx, "pause_a"); err != nil {
		t.Fatal(err)
	}
	if err := b.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if got := paused(); len(got) != 0 {
		t.Errorf("paused after Resume: %v", got)
	}
}

// mustSend sends a the payload 1 with opts, and returns the task's ID.
func mustSend(t *testing.T, a *Actor[int], opts ...SendOption) uint64 {
	t.Helper()
	id, err := a.Send(t.Context(), 1, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestTaskCursorOutOfRange checks that a cursor above the largest task ID
// PostgreSQL can store — a corrupt or hand-made one — is refused with
// ErrBadFilter, naming it, rather than read as a negative ID that lists
// every task from the first; and that a dead-letter cursor that high
// reads no letters, since none has an ID above it.
func TestTaskCursorOutOfRange(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	a := start[int](r, "cursor", nil, Config[int]{})
	mustSend(t, a)
	dead := mustSend(t, a)
	if n, err := a.Cancel(ctx, dead); n != 1 || err != nil {
		t.Fatalf("Cancel = %d, %v", n, err)
	}
	for _, after := range []uint64{math.MaxInt64 + 1, math.MaxUint64} {
		f := TaskFilter{After: after}
		page, err := r.admin().Tasks(ctx, f)
		if !errors.Is(err, ErrBadFilter) || !strings.Contains(err.Error(), strconv.FormatUint(after, 10)) {
			t.Errorf("Admin.Tasks(After: %d) = %v, %v; want ErrBadFilter naming the cursor", after, ids(page), err)
		}
		page, err = a.Tasks(ctx, f)
		if !errors.Is(err, ErrBadFilter) {
			t.Errorf("Actor.Tasks(After: %d) = %v, %v; want ErrBadFilter", after, ids(page), err)
		}
		letters, err := a.DeadLetters(ctx, LetterFilter{AfterID: after})
		if err != nil || len(letters) != 0 {
			t.Errorf("DeadLetters(AfterID: %d) = %d letters, %v; want none, since no ID is above it", after, len(letters), err)
		}
	}
	// The largest ID PostgreSQL stores is still a cursor: nothing is after it.
	page, err := r.admin().Tasks(ctx, TaskFilter{After: math.MaxInt64})
	if err != nil || len(page.Tasks) != 0 || page.Next != 0 {
		t.Errorf("Admin.Tasks(After: MaxInt64) = %v, %v; want an empty last page", page, err)
	}
}

// TestAdminRacesRound checks that RunNow and Delete, whose statement locks
// the rows of the waiting tasks among their ids in id order, do not fail
// when PostgreSQL aborts them to break a deadlock with a round of the
// pump. A task the statement found waiting, but that a fetch took before
// the statement locked its row, is left out — but its row stays locked
// until the statement ends; a round that then gives that task back waits
// for the statement, which may be waiting for a row the round holds.
//
// The test plays the pump itself, on an actor that runs none, with four
// tasks t1 < t2 < t3 < t4 that the operator names: side transactions
// holding t1 and t3 make the statement wait, first with its snapshot
// taken while the fetch takes t2 and t4, then with t2 locked while a
// round completes t4 and waits to give back t2. The statement, let go,
// waits for t4 and closes the cycle. The round's sessions look for a
// deadlock only after ten minutes, so that the statement is the one
// PostgreSQL aborts; the sessions of a role that may not set that are
// refused, and the test skipped.
func TestAdminRacesRound(t *testing.T) {
	for _, tt := range []struct {
		name string
		op   func(*Admin, context.Context, ...uint64) ([]uint64, error)
		gone bool // whether the tasks op returns are deleted
	}{
		{"RunNow", (*Admin).RunNow, false},
		{"Delete", (*Admin).Delete, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			ctx := t.Context()
			pumps := newPoolSetting(t, r.dsn, 4, map[string]string{"deadlock_timeout": "10min"})
			operators := newPoolSetting(t, r.dsn, 2, map[string]string{"deadlock_timeout": "20ms"})
			for _, p := range []*pgpool.Pool{pumps, operators} {
				if err := p.Ping(ctx); err != nil {
					t.Skipf("the role may not set deadlock_timeout: %v", err)
				}
			}
			a := startOn(r, pumps, "adminrace", nil, Config[int]{Lease: time.Minute, Logger: quiet(t)})
			admin, err := NewAdmin(ctx, operators, r.schema)
			if err != nil {
				t.Fatal(err)
			}
			ids, err := a.SendBatch(ctx, []int{1, 2, 3, 4})
			if err != nil {
				t.Fatal(err)
			}
			t1, t2, t3, t4 := ids[0], ids[1], ids[2], ids[3]

			hold1, pid1 := r.lockTask(t1)
			hold3, pid3 := r.lockTask(t3)
			done := make(chan opResult, 1)
			go func() {
				ids, err := tt.op(admin, ctx, t1, t2, t3, t4)
				done <- opResult{ids, err}
			}()
			operator := r.blockedBy(pid1, "the operator's statement did not wait for t1")

			leases := fetchNow(t, a, 4)
			if len(leases) != 2 || leases[0].id != int64(t2) || leases[1].id != int64(t4) {
				t.Fatalf("fetched %d tasks, want t2 and t4 (%d, %d)", len(leases), t2, t4)
			}
			if err := hold1.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if r.blockedBy(pid3, "the operator's statement did not wait for t3") != operator {
				t.Fatal("another session waits for t3")
			}

			// t4's worker hands in its completion, t2's gives t2 back.
			p := &pump[int]{a: a, results: make(chan roundResult, 1)}
			reply := make(chan outcome, 1)
			p.add(&settling{l: leases[1], reply: reply})
			p.add(&settling{l: leases[0], giveBack: true})
			p.launch(p.newRound(false))
			r.blockedBy(operator, "the round did not wait for t2")

			if err := hold3.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			res := within(t, done, 10*time.Second, "the operator's statement did not end")
			if res.err != nil {
				t.Fatalf("%s beside a round: %v", tt.name, res.err)
			}
			// t2 is among them if the round committed before the
			// statement ran again.
			if !slices.Equal(res.ids, []uint64{t1, t3}) && !slices.Equal(res.ids, []uint64{t1, t2, t3}) {
				t.Errorf("%s = %v, want t1, t3 (%d, %d) and maybe t2 (%d)", tt.name, res.ids, t1, t3, t2)
			}
			if rr := within(t, p.results, 10*time.Second, "the round did not end"); rr.err != nil {
				t.Fatalf("the round: %v", rr.err)
			}
			if o := within(t, reply, time.Second, "t4's completion was not answered"); o.err != nil {
				t.Errorf("t4's completion: %v", o.err)
			}
			waiting := 1
			if tt.gone && slices.Contains(res.ids, t2) {
				waiting = 0
			}
			if n := r.count(`SELECT count(*) FROM {s}.tasks WHERE id = $1 AND owner IS NULL`, t2); n != waiting {
				t.Errorf("%d rows of t2 waiting, want %d", n, waiting)
			}
			if n := r.count(`SELECT count(*) FROM {s}.tasks WHERE id = $1`, t4); n != 0 {
				t.Error("t4 was not completed")
			}
			// The aborted try counted nothing: a deleted task is counted
			// dead-lettered once.
			var dead uint64
			if tt.gone {
				dead = uint64(len(res.ids))
			}
			if s, err := a.Stats(ctx); err != nil || s.DeadLettered != dead {
				t.Errorf("stats = %+v, %v; want %d dead-lettered", s, err, dead)
			}
		})
	}
}

// TestAdminRacesFetch checks that RunNow and Delete, at a default
// isolation of REPEATABLE READ, do not fail when a fetch takes one of
// their tasks after their snapshot: locking its row, changed since, the
// statement fails with a serialization failure, where at READ COMMITTED
// it checks the row anew and leaves the task out. A side transaction
// holding t1 makes the statement wait, its snapshot taken, while the
// fetch takes t2.
func TestAdminRacesFetch(t *testing.T) {
	for _, tt := range []struct {
		name string
		op   func(*Admin, context.Context, ...uint64) ([]uint64, error)
	}{
		{"RunNow", (*Admin).RunNow},
		{"Delete", (*Admin).Delete},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			ctx := t.Context()
			a := start(r, "adminrace", nil, Config[int]{Lease: time.Minute, Logger: quiet(t)})
			operators := newPoolSetting(t, r.dsn, 2, map[string]string{"default_transaction_isolation": "repeatable read"})
			admin, err := NewAdmin(ctx, operators, r.schema)
			if err != nil {
				t.Fatal(err)
			}
			ids, err := a.SendBatch(ctx, []int{1, 2})
			if err != nil {
				t.Fatal(err)
			}
			t1, t2 := ids[0], ids[1]

			hold, pid := r.lockTask(t1)
			done := make(chan opResult, 1)
			go func() {
				ids, err := tt.op(admin, ctx, t1, t2)
				done <- opResult{ids, err}
			}()
			r.blockedBy(pid, "the operator's statement did not wait for t1")
			if leases := fetchNow(t, a, 2); len(leases) != 1 || leases[0].id != int64(t2) {
				t.Fatalf("fetched %d tasks, want t2 (%d)", len(leases), t2)
			}
			if err := hold.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			res := within(t, done, 10*time.Second, "the operator's statement did not end")
			if res.err != nil || !slices.Equal(res.ids, []uint64{t1}) {
				t.Errorf("%s beside a fetch = %v, %v, want t1 (%d)", tt.name, res.ids, res.err, t1)
			}
			if n := r.count(`SELECT count(*) FROM {s}.tasks WHERE id = $1 AND owner IS NOT NULL`, t2); n != 1 {
				t.Error("t2 is not running")
			}
		})
	}
}

// An opResult is what an operator's statement on a goroutine returned.
type opResult struct {
	ids []uint64
	err error
}

// lockTask returns a transaction that holds the row of task id, rolled
// back when the test ends unless committed, and its session's pid.
func (r *rig) lockTask(id uint64) (pgx.Tx, int) {
	t := r.t
	t.Helper()
	tx, err := r.pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(context.Background()) })
	var pid int
	if err := tx.QueryRow(context.Background(), expand(r.schema, `SELECT pg_backend_pid() FROM {s}.tasks WHERE id = $1 FOR UPDATE`), int64(id)).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return tx, pid
}

// blockedBy waits until session pid blocks one session, and returns that
// session's pid; it fails the test, saying what, after ten seconds.
func (r *rig) blockedBy(pid int, what string) int {
	r.t.Helper()
	var by []int
	eventually(r.t, 10*time.Second, what, func() bool {
		err := r.pool.QueryRow(context.Background(), `SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, pid).Scan(&by)
		if err != nil {
			r.t.Fatal(err)
		}
		return len(by) == 1
	})
	return by[0]
}

// fetchNow fetches up to n of a's tasks, as its pump does, has a hold
// their leases, and returns them in id order.
func fetchNow(t *testing.T, a *Actor[int], n int) []*lease {
	t.Helper()
	var leases []*lease
	b := &pgx.Batch{}
	a.store.fetch(b, n, a.set.lease, &leases)
	if err := a.store.runBatch(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	a.hold(leases, time.Now())
	slices.SortFunc(leases, func(l, m *lease) int { return cmp.Compare(l.id, m.id) })
	return leases
}
