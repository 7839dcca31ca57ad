package pgactor

import (
	"context"
	"sync"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/pgpool"
	"github.com/jackc/pgx/v5"
)

// A run is one lease on one task: from the fetch that took it to the
// statement that completed, retried, dead-lettered or gave it back.
type run[T any] struct {
	id       int64
	runs     int32 // the lease's fencing token
	typ      string
	payload  []byte
	enqueued time.Time
	attempt  int
	lost     int
	canceled bool // canceled before this run took it

	ctx    context.Context // the handler's context, before its timeout
	cancel context.CancelCauseFunc
	state  *taskState // what Tx and Send find in ctx

	// Guarded by the actor's mutex.
	deadline time.Time // when the lease runs out, as far as this process knows
	released bool      // no longer in the actor's leases: settled or given back
}

// task returns the Task the handler sees.
func (r *run[T]) task(payload T) actor.Task[T] {
	return actor.Task[T]{ID: uint64(r.id), Type: r.typ, Attempt: r.attempt, Enqueued: r.enqueued, Payload: payload}
}

// A taskState is what a handler's context carries: the pool, and the
// task's transaction once Tx or a Send has begun it.
type taskState struct {
	pool  *pgpool.Pool
	mu    sync.Mutex
	tx    pgx.Tx
	ended bool // the run has settled: the transaction is no longer the handler's
}

type taskKey struct{}

// stateFrom returns the task state ctx carries, or nil.
func stateFrom(ctx context.Context) *taskState {
	st, _ := ctx.Value(taskKey{}).(*taskState)
	return st
}

// begin returns the task's transaction, begun now if it was not.
func (st *taskState) begin(ctx context.Context) (pgx.Tx, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ended {
		return nil, ErrNotInTask
	}
	if st.tx == nil {
		// Detached: a With around the call must not lend its connection
		// to a transaction that outlives it.
		tx, err := st.pool.Begin(actorpool.Detach(ctx))
		if err != nil {
			return nil, err
		}
		st.tx = tx
	}
	return st.tx, nil
}

// end takes the task's transaction, if one was begun, from the handler.
func (st *taskState) end() pgx.Tx {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ended = true
	tx := st.tx
	st.tx = nil
	return tx
}
