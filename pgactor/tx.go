package pgactor

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Tx returns the transaction of the task whose handler received ctx,
// beginning it on a connection from the actor's pool the first time it is
// asked for. The actor commits it together with the task's completion —
// the row of the task is deleted in it — so the handler's writes through
// it happen exactly once: if the handler fails, its worker dies, or its
// lease passes to another worker before the commit, they are rolled back
// with the completion, and the task runs again. A Send on ctx joins the
// same transaction.
//
// The handler must not Commit or Rollback it (both return ErrTaskTx); its
// Begin makes a savepoint. Like any pgx.Tx it is for one goroutine at a
// time. Holding it holds a connection of the pool and row locks until the
// handler returns, so a handler should use it for its writes, not for slow
// work done meanwhile. It fails with ErrNotInTask on a context that is not
// a running handler's.
func Tx(ctx context.Context) (pgx.Tx, error) {
	st := stateFrom(ctx)
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
