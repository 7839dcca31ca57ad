package pgactor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A moveCase is a task put in a state for a move to act on, with the
// store of an actor of its own.
type moveCase struct {
	t     *testing.T
	r     *rig
	s     *store
	lease *lease // the task, with this instance's lease if it holds one
}

// put makes a task of the case's actor in state, leased to the store's
// owner with fencing token 2 when it is leased.
func (c *moveCase) put(state taskState) {
	c.t.Helper()
	type row struct {
		in       time.Duration // available_at from now
		owner    *string
		attempt  int
		canceled bool
	}
	owner := c.s.owner
	rows := map[taskState]row{
		stateQueued:    {in: -time.Second},
		stateScheduled: {in: time.Hour},
		stateRetrying:  {in: time.Hour, attempt: 1},
		stateRunning:   {in: time.Hour, owner: &owner, attempt: 1},
		stateExpired:   {in: -time.Second, owner: &owner, attempt: 1},
		stateCanceling: {in: time.Hour, owner: &owner, attempt: 1, canceled: true},
		stateDead:      {in: -time.Second},
	}
	if state == stateNone {
		c.lease = &lease{}
		return
	}
	w, ok := rows[state]
	if !ok {
		c.t.Fatalf("no task can be put in state %v", state)
	}
	var id int64
	if err := c.r.pool.QueryRow(context.Background(), expand(c.r.schema, `INSERT INTO {s}.tasks (actor, type, payload, available_at, owner, runs, attempt, canceled)
		VALUES ($1, 'int', '1', now() + $2::bigint * interval '1 microsecond', $3, 2, $4, $5) RETURNING id`),
		c.s.actor, w.in.Microseconds(), w.owner, w.attempt, w.canceled).Scan(&id); err != nil {
		c.t.Fatal(err)
	}
	if state == stateDead {
		c.r.exec(`WITH d AS (DELETE FROM {s}.tasks WHERE id = $1 RETURNING *)
			INSERT INTO {s}.dead_letters (id, actor, type, payload, priority, unique_key, enqueued_at, runs, attempts, lost, reason)
			SELECT id, actor, type, payload, priority, unique_key, enqueued_at, runs, attempt, lost, 'canceled' FROM d`, id)
	}
	c.lease = &lease{id: id, token: 2}
}

// state returns where the case's task is.
func (c *moveCase) state() taskState {
	c.t.Helper()
	var name string
	err := c.r.pool.QueryRow(context.Background(), expand(c.r.schema, `SELECT CASE
			WHEN owner IS NOT NULL AND canceled THEN 'canceling'
			WHEN owner IS NOT NULL AND available_at > now() THEN 'running'
			WHEN owner IS NOT NULL THEN 'expired'
			WHEN available_at <= now() THEN 'queued'
			WHEN attempt = 0 THEN 'scheduled'
			ELSE 'retrying' END FROM {s}.tasks WHERE id = $1
		UNION ALL SELECT 'dead' FROM {s}.dead_letters WHERE id = $1
		UNION ALL SELECT 'completed' FROM {s}.counts WHERE actor = $2 AND completed > 0 AND NOT EXISTS (SELECT 1 FROM {s}.tasks WHERE id = $1)`),
		c.lease.id, c.s.actor).Scan(&name)
	if err == pgx.ErrNoRows {
		return stateNone
	}
	if err != nil {
		c.t.Fatal(err)
	}
	for s := range taskStates {
		if s.String() == name {
			return s
		}
	}
	c.t.Fatalf("unknown state %q", name)
	return stateNone
}

// batch runs what queue puts on a batch.
func (c *moveCase) batch(queue func(b *pgx.Batch)) {
	c.t.Helper()
	b := &pgx.Batch{}
	queue(b)
	if err := c.r.pool.SendBatch(context.Background(), b).Close(); err != nil {
		c.t.Fatal(err)
	}
}

// ok fails the test on err.
func (c *moveCase) ok(_ any, err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
}

// stale is the case's lease as a worker holds it that took the task
// before another worker did.
func (c *moveCase) stale() *lease { return &lease{id: c.lease.id, token: c.lease.token - 1} }

// A moveDriver makes a move of taskMoves through its method: move with
// the move's conditions, refuse with its fence in the way, from the state
// refuse.from (a state the move is made from unless said).
type moveDriver struct {
	move   func(c *moveCase)
	refuse func(c *moveCase)
	from   taskState // where refuse starts, if not from the move's first state
}

// moveDrivers are keyed by a move's method and its when.
var moveDrivers = map[string]moveDriver{
	"send": {
		move: func(c *moveCase) { c.sendKeyed("k", 0) },
		refuse: func(c *moveCase) {
			c.sendKeyed("k", 0)
			c.lease = &lease{}
			c.sendKeyed("k", 0)
		},
	},
	"send, RunAt or After in the future": {
		move:   func(c *moveCase) { c.sendKeyed("k", time.Hour) },
		refuse: func(c *moveCase) { c.sendKeyed("k", time.Hour); c.lease = &lease{}; c.sendKeyed("k", time.Hour) },
	},
	"sendBatch": {move: func(c *moveCase) { c.sendBatch(0) }},
	"sendFor": {
		move:   func(c *moveCase) { c.sendFor(0) },
		refuse: func(c *moveCase) { c.sendFor(0); c.lease = &lease{}; c.sendFor(0) },
	},
	"sendFor, RunAt or After in the future": {
		move:   func(c *moveCase) { c.sendFor(time.Hour) },
		refuse: func(c *moveCase) { c.sendFor(time.Hour); c.lease = &lease{}; c.sendFor(time.Hour) },
	},
	"fire": {
		move:   func(c *moveCase) { c.fire() },
		refuse: func(c *moveCase) { c.fire(); c.lease = &lease{}; c.fire() },
	},
	"sendBatch, RunAt or After in the future": {move: func(c *moveCase) { c.sendBatch(time.Hour) }},
	"fetch": {
		move: func(c *moveCase) {
			var got []*lease
			c.batch(func(b *pgx.Batch) { c.s.fetch(b, 10, time.Hour, &got) })
			if len(got) != 1 || got[0].id != c.lease.id {
				c.t.Errorf("fetched %d tasks, want task %d", len(got), c.lease.id)
			}
		},
		refuse: func(c *moveCase) {
			tx, err := c.r.pool.Begin(context.Background())
			if err != nil {
				c.t.Fatal(err)
			}
			defer tx.Rollback(context.Background())
			if _, err := tx.Exec(context.Background(), expand(c.r.schema, `SELECT 1 FROM {s}.tasks WHERE id = $1 FOR UPDATE`), c.lease.id); err != nil {
				c.t.Fatal(err)
			}
			var got []*lease
			c.batch(func(b *pgx.Batch) { c.s.fetch(b, 10, time.Hour, &got) })
		},
	},
	"heartbeat": {
		move: func(c *moveCase) {
			c.batch(func(b *pgx.Batch) { c.s.heartbeat(b, []*lease{c.lease}, time.Hour, map[int64]bool{}) })
		},
		refuse: func(c *moveCase) {
			c.batch(func(b *pgx.Batch) { c.s.heartbeat(b, []*lease{c.stale()}, time.Hour, map[int64]bool{}) })
		},
		from: stateExpired,
	},
	"complete": {
		move: func(c *moveCase) {
			c.batch(func(b *pgx.Batch) { c.s.complete(b, []*lease{c.lease}, map[int64]int32{}) })
		},
		refuse: func(c *moveCase) {
			c.batch(func(b *pgx.Batch) { c.s.complete(b, []*lease{c.stale()}, map[int64]int32{}) })
		},
	},
	"giveBack": {
		move:   func(c *moveCase) { c.batch(func(b *pgx.Batch) { c.s.giveBack(b, []*lease{c.lease}) }) },
		refuse: func(c *moveCase) { c.batch(func(b *pgx.Batch) { c.s.giveBack(b, []*lease{c.stale()}) }) },
	},
	"completeOne": {
		move:   func(c *moveCase) { c.completeOne(c.lease) },
		refuse: func(c *moveCase) { c.completeOne(c.stale()) },
	},
	"retry": {
		move:   func(c *moveCase) { c.ok(c.s.retry(context.Background(), c.lease, time.Hour, "failed")) },
		refuse: func(c *moveCase) { c.ok(c.s.retry(context.Background(), c.stale(), time.Hour, "failed")) },
	},
	"deadLetter": {
		move:   func(c *moveCase) { c.ok(c.s.deadLetter(context.Background(), c.lease, ReasonPermanent, nil, true)) },
		refuse: func(c *moveCase) { c.ok(c.s.deadLetter(context.Background(), c.stale(), ReasonPermanent, nil, true)) },
	},
	"cancel, the task waits": {move: func(c *moveCase) { c.ok(c.s.cancel(context.Background(), uint64(c.lease.id))) }},
	"cancel, the task runs": {
		move:   func(c *moveCase) { c.ok(c.s.cancel(context.Background(), uint64(c.lease.id))) },
		refuse: func(c *moveCase) { c.ok(c.s.cancel(context.Background(), uint64(c.lease.id))) },
		from:   stateCanceling,
	},
	"replay": {
		move: func(c *moveCase) { c.ok(c.s.replay(context.Background(), []uint64{uint64(c.lease.id)})) },
		refuse: func(c *moveCase) {
			c.r.exec(`UPDATE {s}.dead_letters SET unique_key = 'k' WHERE id = $1`, c.lease.id)
			c.r.exec(`INSERT INTO {s}.tasks (actor, type, payload, available_at, unique_key) VALUES ($1, 'int', '1', now(), 'k')`, c.s.actor)
			c.ok(c.s.replay(context.Background(), []uint64{uint64(c.lease.id)}))
		},
	},
	"deleteDeadLetters": {move: func(c *moveCase) { c.ok(c.s.deleteDeadLetters(context.Background(), []uint64{uint64(c.lease.id)})) }},
	"snooze, its first attempt": {
		move:   func(c *moveCase) { c.ok(c.s.snooze(context.Background(), c.lease, time.Hour)) },
		refuse: func(c *moveCase) { c.ok(c.s.snooze(context.Background(), c.stale(), time.Hour)) },
	},
	"snooze, a later attempt": {
		move: func(c *moveCase) {
			c.r.exec(`UPDATE {s}.tasks SET attempt = 2 WHERE id = $1`, c.lease.id)
			c.ok(c.s.snooze(context.Background(), c.lease, time.Hour))
		},
		refuse: func(c *moveCase) { c.ok(c.s.snooze(context.Background(), c.stale(), time.Hour)) },
	},
	"runNow": {
		move:   func(c *moveCase) { c.ok(c.s.runNow(context.Background(), []uint64{uint64(c.lease.id)})) },
		refuse: func(c *moveCase) { c.ok(c.s.runNow(context.Background(), []uint64{uint64(c.lease.id)})) },
		from:   stateRunning,
	},
	"deleteTasks": {
		move:   func(c *moveCase) { c.ok(c.s.deleteTasks(context.Background(), []uint64{uint64(c.lease.id)})) },
		refuse: func(c *moveCase) { c.ok(c.s.deleteTasks(context.Background(), []uint64{uint64(c.lease.id)})) },
		from:   stateRunning,
	},
}

// sendKeyed sends a task with unique key key, due after delay, and makes
// it the case's task if one was stored.
func (c *moveCase) sendKeyed(key string, delay time.Duration) {
	c.t.Helper()
	id, err := c.s.send(context.Background(), c.r.pool, []byte("1"), &sendOptions{typ: "int", key: key, hasKey: true, delay: delay}, false)
	if err != nil {
		c.t.Fatal(err)
	}
	if id != 0 {
		c.lease = &lease{id: int64(id)}
	}
}

// sendBatch sends a batch of one task, due after delay, and makes it the
// case's task.
func (c *moveCase) sendBatch(delay time.Duration) {
	c.t.Helper()
	ids, err := c.s.sendBatch(context.Background(), c.r.pool, [][]byte{[]byte("1")}, &sendOptions{typ: "int", delay: delay}, true)
	if err != nil || len(ids) != 1 {
		c.t.Fatalf("sendBatch: %v, %v", ids, err)
	}
	c.lease = &lease{id: int64(ids[0])}
}

// sendFor sends a task with UniqueFor's key "k" for an hour, due after
// delay, and makes it the case's task if one was stored.
func (c *moveCase) sendFor(delay time.Duration) {
	c.t.Helper()
	id, fresh, err := c.s.sendFor(context.Background(), c.r.pool, []byte("1"), &sendOptions{typ: "int", periodKey: "k", period: time.Hour, delay: delay}, false)
	if err != nil {
		c.t.Fatal(err)
	}
	if fresh {
		c.lease = &lease{id: int64(id)}
	}
}

// fire has the scheduler fire the case's schedule, made the first time,
// for the period of 2026-01-01, and makes its task the case's task if one
// was sent.
func (c *moveCase) fire() {
	c.t.Helper()
	c.r.exec(`INSERT INTO {s}.actors (name) VALUES ($1) ON CONFLICT DO NOTHING`, c.s.actor)
	c.r.exec(`INSERT INTO {s}.schedules (actor, name, spec, type, payload, on_missed, next_at)
		VALUES ($1, 's', '@daily', 'int', '1', 'run_once', '2026-01-01') ON CONFLICT DO NOTHING`, c.s.actor)
	tx, err := c.r.pool.Begin(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	id, err := c.s.fire(context.Background(), tx, "s", day, day.AddDate(0, 0, 1), day.AddDate(0, 0, 1))
	if err != nil {
		c.t.Fatal(err)
	}
	if err := tx.Commit(context.Background()); err != nil {
		c.t.Fatal(err)
	}
	if id != 0 {
		c.lease = &lease{id: int64(id)}
	}
}

// completeOne completes l's task in a transaction, committed.
func (c *moveCase) completeOne(l *lease) {
	c.t.Helper()
	tx, err := c.r.pool.Begin(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	c.ok(c.s.completeOne(context.Background(), tx, l))
	if err := tx.Commit(context.Background()); err != nil {
		c.t.Fatal(err)
	}
}

// TestTaskMoves makes every move of taskMoves from each state it lists
// through the store's method, and checks that the task ends where the
// table says; then makes it again with its fence in the way, and checks
// that the task stays where it was. Every move has a driver, and every
// driver a move.
func TestTaskMoves(t *testing.T) {
	r := newRig(t)
	n := 0
	newCase := func() *moveCase {
		n++
		actor := fmt.Sprintf("moves_%d", n)
		return &moveCase{t: t, r: r, s: &store{pool: r.pool, schema: r.schema, actor: actor, owner: "this", channel: channelName(r.schema)}}
	}
	driven := map[string]bool{}
	for _, m := range taskMoves {
		key := m.by
		if m.when != "" {
			key += ", " + m.when
		}
		d, ok := moveDrivers[key]
		if !ok {
			t.Errorf("%v: no driver", m)
			continue
		}
		driven[key] = true
		for _, from := range m.from {
			c := newCase()
			c.put(from)
			d.move(c)
			if got := c.state(); got != m.to {
				t.Errorf("%v: from %v, the task went to %v", m, from, got)
			}
		}
		switch {
		case m.fence == "" && d.refuse != nil:
			t.Errorf("%v: the table names no fence, but its driver refuses it", m)
		case m.fence != "" && d.refuse == nil:
			t.Errorf("%v: no driver puts its fence (%s) in the way", m, m.fence)
		case m.fence != "":
			from := d.from
			if from == stateNone && m.from[0] != stateNone {
				from = m.from[0]
			}
			c := newCase()
			c.put(from)
			d.refuse(c)
			if got := c.state(); got != from {
				t.Errorf("%v: fenced by %s, from %v the task went to %v, want it left there", m, m.fence, from, got)
			}
		}
	}
	for key := range moveDrivers {
		if !driven[key] {
			t.Errorf("driver %q drives no move of taskMoves", key)
		}
	}
}
