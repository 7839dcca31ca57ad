package pgpool

import (
	"context"

	"github.com/actorpool/actorpool"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A Tx is a transaction begun by Pool.Begin or Pool.BeginTx, as a pgx.Tx.
// Its connection goes back to the pool when it is committed or rolled
// back.
type Tx struct {
	t     pgx.Tx
	p     *Pool
	lease actorpool.Lease[*pooledConn]
	done  bool // the connection was given back
}

// Begin starts a pseudo nested transaction: a savepoint.
func (tx *Tx) Begin(ctx context.Context) (pgx.Tx, error) { return tx.t.Begin(ctx) }

// Commit commits the transaction and gives the connection back.
func (tx *Tx) Commit(ctx context.Context) error {
	err := tx.t.Commit(ctx)
	tx.giveBack()
	return err
}

// Rollback rolls the transaction back and gives the connection back. After
// Commit it does nothing and returns pgx.ErrTxClosed, so that it can be
// deferred.
func (tx *Tx) Rollback(ctx context.Context) error {
	err := tx.t.Rollback(ctx)
	tx.giveBack()
	return err
}

func (tx *Tx) giveBack() {
	if !tx.done {
		tx.done = true
		tx.p.give(tx.lease)
	}
}

// CopyFrom copies rows into a table with the COPY protocol.
func (tx *Tx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	return tx.t.CopyFrom(ctx, table, columns, src)
}

// SendBatch sends the batch's queries in the transaction.
func (tx *Tx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return tx.t.SendBatch(ctx, b)
}

// LargeObjects returns the large objects of the transaction.
func (tx *Tx) LargeObjects() pgx.LargeObjects { return tx.t.LargeObjects() }

// Prepare prepares a statement on the transaction's connection.
func (tx *Tx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return tx.t.Prepare(ctx, name, sql)
}

// Exec runs sql in the transaction.
func (tx *Tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return tx.t.Exec(ctx, sql, args...)
}

// Query runs sql in the transaction.
func (tx *Tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return tx.t.Query(ctx, sql, args...)
}

// QueryRow runs sql in the transaction.
func (tx *Tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return tx.t.QueryRow(ctx, sql, args...)
}

// Conn returns the transaction's connection.
func (tx *Tx) Conn() *pgx.Conn { return tx.t.Conn() }
