package pgpool

import (
	"context"

	"github.com/actorpool/actorpool"
	"github.com/jackc/pgx/v5"
)

// The types here wrap what the pool's one-call methods return, to give the
// connection back when the caller is done with it.

// poolRows gives its connection back when closed or read to the end.
type poolRows struct {
	pgx.Rows
	lease    actorpool.Lease[*pooledConn]
	released bool
}

func (r *poolRows) release() {
	if !r.released {
		r.released = true
		r.lease.Release()
	}
}

func (r *poolRows) Close() {
	r.Rows.Close()
	r.release()
}

func (r *poolRows) Next() bool {
	if r.released {
		return false
	}
	if r.Rows.Next() {
		return true
	}
	// pgx has closed the rows: the connection is free.
	r.release()
	return false
}

// Scan scans the current row. An error closes the rows, as pgx does on a
// failed Scan, and gives the connection back, so that a caller who
// returns on it without closing the rows leaks nothing.
func (r *poolRows) Scan(dest ...any) error {
	err := r.Rows.Scan(dest...)
	if err != nil {
		r.Close()
	}
	return err
}

// Values returns the current row's values. An error closes the rows and
// gives the connection back, as in Scan.
func (r *poolRows) Values() ([]any, error) {
	v, err := r.Rows.Values()
	if err != nil {
		r.Close()
	}
	return v, err
}

// Conn returns nil: the connection belongs to the pool.
func (r *poolRows) Conn() *pgx.Conn { return nil }

// poolRow gives its connection back when scanned.
type poolRow struct {
	row   pgx.Row
	lease actorpool.Lease[*pooledConn]
}

// Scan scans the row and gives the connection back, even when a
// destination's scanner panics: the connection, its result unread, is then
// closed by the pool, and the panic goes on.
func (r *poolRow) Scan(dest ...any) error {
	defer r.lease.Release()
	return r.row.Scan(dest...)
}

// errRow is the row of a query that could not take a connection.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// poolBatchResults gives its connection back when closed, unless the
// batch began a transaction: then the transaction gives it back.
type poolBatchResults struct {
	pgx.BatchResults
	lease    actorpool.Lease[*pooledConn]
	tx       *poolTx // the batch's transaction, if it began one
	released bool
}

func (b *poolBatchResults) Close() error {
	err := b.BatchResults.Close()
	if b.tx == nil && !b.released {
		b.released = true
		b.lease.Release()
	}
	return err
}

func (b *poolBatchResults) Tx() pgx.Tx {
	if b.tx == nil {
		return nil
	}
	return b.tx
}

// poolTx gives its connection back when committed or rolled back.
type poolTx struct {
	pgx.Tx
	lease    actorpool.Lease[*pooledConn]
	released bool
}

func (tx *poolTx) release() {
	if !tx.released {
		tx.released = true
		tx.lease.Release()
	}
}

func (tx *poolTx) Commit(ctx context.Context) error {
	err := tx.Tx.Commit(ctx)
	tx.release()
	return err
}

func (tx *poolTx) Rollback(ctx context.Context) error {
	err := tx.Tx.Rollback(ctx)
	tx.release()
	return err
}
