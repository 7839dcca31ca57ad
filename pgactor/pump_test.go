package pgactor

import (
	"cmp"
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
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
	leases := fetchedLeases(r, a, 3)
	x, z, y := leases[0], leases[1], leases[2]
	var order []int64
	if err := r.pool.QueryRow(ctx, expand(r.schema, `SELECT array_agg(id ORDER BY ctid) FROM {s}.tasks`)).Scan(&order); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []int64{x.id, z.id, y.id}) {
		t.Fatalf("the rows lie in the order %v, not by id", order)
	}

	side := lockRow(r, z.id)
	p := &pump[int]{a: a, results: make(chan roundResult, 4)}
	p.launch(p.newRound(true))
	eventually(t, 10*time.Second, "the heartbeat did not wait for z's row", func() bool { return r.lockWaits() == 1 })

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
		return len(results) > 0 || r.lockWaits() == 2
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

// A completion handed in while the heartbeat in flight renews its lease
// waits for that heartbeat (afterBeat), and is settled after it whatever
// becomes of it: when Close drains the pump, and when the heartbeat fails.
func TestAfterBeatSettledAfterHeartbeat(t *testing.T) {
	for _, tc := range []struct {
		name string
		// end ends the heartbeat, which waits for z's row locked by side,
		// and has the pump settle x's completion after it.
		end func(t *testing.T, r *rig, p *pump[int], side pgx.Tx)
	}{{
		name: "drained at Close",
		end: func(t *testing.T, r *rig, p *pump[int], side pgx.Tx) {
			drained := make(chan struct{})
			go func() {
				p.drain()
				close(drained)
			}()
			if err := side.Commit(t.Context()); err != nil {
				t.Fatal(err)
			}
			within(t, drained, 10*time.Second, "drain did not end")
		},
	}, {
		name: "heartbeat failed",
		end: func(t *testing.T, r *rig, p *pump[int], side pgx.Tx) {
			r.count(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`, r.schema)
			res := within(t, p.results, 10*time.Second, "the heartbeat did not end")
			if res.err == nil {
				t.Fatal("the heartbeat did not fail")
			}
			p.absorb(res)
			if len(p.afterBeat) != 0 || p.renewing != nil || len(p.completions) != 1 {
				t.Fatalf("after the failed heartbeat: %d waiting for it, renewing %v, %d completions for the next round",
					len(p.afterBeat), p.renewing, len(p.completions))
			}
			p.launch(p.newRound(false))
			if res := within(t, p.results, 10*time.Second, "the round after the heartbeat did not end"); res.err != nil {
				t.Fatalf("the round after the heartbeat: %v", res.err)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			a := start(r, "afterbeat", nil, Config[int]{Logger: quiet(t)})
			leases := fetchedLeases(r, a, 2)
			x, z := leases[0], leases[1]

			side := lockRow(r, z.id)
			p := &pump[int]{a: a, results: make(chan roundResult, 4), timer: time.NewTimer(time.Hour)}
			defer p.timer.Stop()
			p.launch(p.newRound(true))
			eventually(t, 10*time.Second, "the heartbeat did not wait for z's row", func() bool { return r.lockWaits() == 1 })
			reply := make(chan outcome, 1)
			p.add(&settling{l: x, reply: reply})
			if len(p.afterBeat) != 1 {
				t.Fatalf("x's completion did not wait for the heartbeat renewing x")
			}

			tc.end(t, r, p, side)
			if o := within(t, reply, time.Second, "x's completion was not answered"); o.err != nil {
				t.Errorf("x's completion: %v", o.err)
			}
			if n := r.count(`SELECT count(*) FROM {s}.tasks WHERE id = $1`, x.id); n != 0 {
				t.Error("x was not completed")
			}
		})
	}
}

// TestCompletionOutlivesNoStuckHeartbeat checks that a completion handed
// in while the heartbeat in flight renews its lease waits for that
// heartbeat only until the next one is due: a heartbeat stuck past then —
// here waiting for a row another transaction holds, as one on a
// connection that stopped answering waits until its round gives up, a
// whole Lease — would otherwise hold the completion until the lease ran
// out, and the task, done, would run again.
func TestCompletionOutlivesNoStuckHeartbeat(t *testing.T) {
	r := newRig(t)
	const lease, beat = 3 * time.Second, time.Second
	started := make(chan int, 2)
	finishX, releaseZ := make(chan struct{}), make(chan struct{})
	defer close(releaseZ)
	var runsOfX atomic.Int32
	a := start(r, "stuckbeat", func(ctx context.Context, task actor.Task[int]) error {
		started <- task.Payload
		if task.Payload == 1 {
			<-releaseZ // z runs on, its lease renewed by the heartbeat
			return nil
		}
		runsOfX.Add(1)
		<-finishX
		return nil
	}, Config[int]{Workers: 2, Lease: lease, Heartbeat: beat, Logger: quiet(t)})
	ctx := t.Context()
	// z before x, by id and by row, so that the heartbeat waits for z's
	// row before it locks x's.
	z, err := a.Send(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	x, err := a.Send(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		within(t, started, 10*time.Second, "a task did not start")
	}

	lockRow(r, int64(z))
	eventually(t, 10*time.Second, "no heartbeat waited for z's row", func() bool { return r.lockWaits() == 1 })

	done := time.Now()
	close(finishX)
	// The next heartbeat is due within beat; the stuck one gives up only
	// after lease.
	limit := beat + lease/3
	eventually(t, limit, "x's completion waited for the stuck heartbeat", func() bool {
		return r.count(`SELECT count(*) FROM {s}.tasks WHERE id = $1`, int64(x)) == 0
	})
	t.Logf("x completed %v after its handler returned", time.Since(done).Round(time.Millisecond))
	if n := runsOfX.Load(); n != 1 {
		t.Errorf("x ran %d times", n)
	}
}

// fetchedLeases sends n tasks through a, which runs no worker, fetches
// and holds their leases as a round of its pump would, and returns them
// in the order of their ids, for a test that plays the pump itself.
func fetchedLeases(r *rig, a *Actor[int], n int) []*lease {
	r.t.Helper()
	payloads := make([]int, n)
	for i := range payloads {
		payloads[i] = i + 1
	}
	if _, err := a.SendBatch(r.t.Context(), payloads); err != nil {
		r.t.Fatal(err)
	}
	var leases []*lease
	b := &pgx.Batch{}
	a.store.fetch(b, n, a.set.lease, &leases)
	if err := a.store.runBatch(r.t.Context(), b); err != nil {
		r.t.Fatal(err)
	}
	a.hold(leases, time.Now())
	slices.SortFunc(leases, func(l, m *lease) int { return cmp.Compare(l.id, m.id) })
	return leases
}

// lockRow locks the row of task id in a transaction beside the actor's,
// so that the actor's statements that lock it wait, until the test
// commits the transaction or ends.
func lockRow(r *rig, id int64) pgx.Tx {
	r.t.Helper()
	side, err := r.pool.Begin(r.t.Context())
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { side.Rollback(context.Background()) })
	if _, err := side.Exec(r.t.Context(), expand(r.schema, `SELECT FROM {s}.tasks WHERE id = $1 FOR UPDATE`), id); err != nil {
		r.t.Fatal(err)
	}
	return side
}
