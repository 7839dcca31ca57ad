package pgactor

import (
	"cmp"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestSettlingWaitsForHeartbeat checks that the pump's rounds, which run
// side by side, do not deadlock: a lease handed in while the heartbeat in
// flight renews it is settled once the heartbeat has committed, not by a
// round beside it. Each statement locks its rows in the order its plan
// visits them, and a round's statements run one after another, so a round
// that completed task y and then gave back task x, beside a heartbeat
// that had locked x and waited for z, locked y and waited for x; the
// heartbeat, once it had z, waited for y, and PostgreSQL aborted one of
// the two after deadlock_timeout. Another transaction holding z's row
// makes the heartbeat wait in between.
//
// The test plays the pump itself, on an actor that runs none: it holds
// the leases of three tasks, x < z < y by id and by the order of their
// rows, so that any plan of the heartbeat visits them in that order.
func TestSettlingWaitsForHeartbeat(t *testing.T) {
	r := newRig(t)
	a := start(r, "lockorder", nil, Config[int]{Logger: quiet(t)})
	ctx := t.Context()
	if _, err := a.SendBatch(ctx, []int{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	var leases []*lease
	b := &pgx.Batch{}
	a.store.fetch(b, 3, a.set.lease, &leases)
	if err := a.store.runBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	a.hold(leases, time.Now())
	slices.SortFunc(leases, func(l, m *lease) int { return cmp.Compare(l.id, m.id) })
	x, z, y := leases[0], leases[1], leases[2]
	var order []int64
	if err := r.pool.QueryRow(ctx, expand(r.schema, `SELECT array_agg(id ORDER BY ctid) FROM {s}.tasks`)).Scan(&order); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []int64{x.id, z.id, y.id}) {
		t.Fatalf("the rows lie in the order %v, not by id", order)
	}

	side, err := r.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer side.Rollback(context.Background())
	if _, err := side.Exec(ctx, expand(r.schema, `SELECT FROM {s}.tasks WHERE id = $1 FOR UPDATE`), z.id); err != nil {
		t.Fatal(err)
	}
	waiting := func() int {
		return r.count(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`, r.schema)
	}

	p := &pump[int]{a: a, results: make(chan roundResult, 4)}
	p.launch(p.newRound(true))
	eventually(t, 10*time.Second, "the heartbeat did not wait for z's row", func() bool { return waiting() == 1 })

	// y's worker hands in its completion, x's gives x back, and the pump
	// makes its next round.
	reply := make(chan outcome, 1)
	p.add(&settling{l: y, reply: reply})
	p.add(&settling{l: x, giveBack: true})
	p.launch(p.newRound(false))
	var results []roundResult
	eventually(t, 10*time.Second, "the round neither waited for a row nor ended", func() bool {
		select {
		case res := <-p.results:
			results = append(results, res)
		default:
		}
		return len(results) > 0 || waiting() == 2
	})

	if err := side.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for len(p.inflight) > 0 {
		var res roundResult
		if len(results) > 0 {
			res, results = results[0], results[1:]
		} else {
			res = within(t, p.results, 10*time.Second, "a round did not end")
		}
		if res.err != nil {
			t.Fatalf("a round failed beside the heartbeat: %v", res.err)
		}
		p.absorb(res)
		if len(p.inflight) == 0 && len(p.completions)+len(p.giveBacks) > 0 {
			p.launch(p.newRound(false)) // what waited for the heartbeat
		}
	}

	if o := within(t, reply, time.Second, "y's completion was not answered"); o.err != nil {
		t.Errorf("y's completion: %v", o.err)
	}
	if n := r.count(`SELECT count(*) FROM {s}.tasks WHERE id = $1`, y.id); n != 0 {
		t.Error("y was not completed")
	}
	if n := r.count(`SELECT count(*) FROM {s}.tasks WHERE id = $1 AND owner IS NULL AND attempt = 0`, x.id); n != 1 {
		t.Error("x was not given back")
	}
	if n := r.count(`SELECT count(*) FROM {s}.tasks WHERE id = $1 AND owner = $2`, z.id, a.store.owner); n != 1 {
		t.Error("z's lease was lost")
	}
}
