package pgactor

import (
	"context"
	"sync"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/pgpool"
	"github.com/jackc/pgx/v5"
)

// Tx returns the transaction of the task whose handler received ctx,
// beginning it on a connection from the actor's pool the first time it is
// asked for. The actor commits it together with the task's completion —
// the row of the task is deleted in it — so the handler's writes through
// it happen exactly once: if the handler fails, its worker dies, or its
// lease passes to another worker before the commit, they are rolled back
// with the completion, and the task runs again. A commit the server
// refuses (a deferred constraint, a serialization failure) fails the
// attempt, which is retried or dead-lettered as any failure is. A Send on
// ctx joins the same transaction.
//
// The handler must not Commit or Rollback it (both return ErrTaskTx); its
// Begin makes a savepoint. Like any pgx.Tx it is for one goroutine at a
// time. Holding it holds a connection of the pool and row locks until the
// handler returns, so a handler should use it for its writes, not for slow
// work done meanwhile. It fails with ErrNotInTask on a context that is not
// a running handler's.
func Tx(ctx context.Context) (pgx.Tx, error) {
	st := handlerTxFrom(ctx)
	if st == nil {
		return nil, ErrNotInTask
	}
	tx, err := st.begin(ctx)
	if err != nil {
		return nil, err
	}
	return taskTx{tx}, nil
}

// taskTx is the task's transaction as a handler sees it: the actor ends it.
type taskTx struct{ pgx.Tx }

func (taskTx) Commit(context.Context) error   { return ErrTaskTx }
func (taskTx) Rollback(context.Context) error { return ErrTaskTx }

// A handlerTx is what a handler's context carries: the pool, the task's
// headers, for ScheduledFor, and the task's transaction once Tx or a Send
// has begun it.
type handlerTx struct {
	pool    *pgpool.Pool
	headers []byte // the lease's: read only
	mu      sync.Mutex
	tx      pgx.Tx
	ended   bool // the run has settled: the transaction is no longer the handler's
}

type taskKey struct{}

// stateFrom returns the task state ctx carries, or nil.
func handlerTxFrom(ctx context.Context) *handlerTx {
	st, _ := ctx.Value(taskKey{}).(*handlerTx)
	return st
}

// begin returns the task's transaction, begun now if it was not.
func (st *handlerTx) begin(ctx context.Context) (pgx.Tx, error) {
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
func (st *handlerTx) end() pgx.Tx {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ended = true
	tx := st.tx
	st.tx = nil
	return tx
}
