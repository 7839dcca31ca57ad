package pgpool

import (
	"github.com/actorpool/actorpool"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// The types here wrap what the pool's one-call methods return, to give the
// connection back when the caller is done with it, or to carry the error
// of a take that got no connection.

// poolRows gives its connection back when closed or read to the end.
type poolRows struct {
	pgx.Rows
	p        *Pool
	lease    actorpool.Lease[*pooledConn]
	released bool
}

func (r *poolRows) release() {
	if !r.released {
		r.released = true
		r.p.give(r.lease)
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

// errRows are the rows of a query that failed, or got no connection: they
// carry its error, so that the idiom of pgx's documentation,
//
//	rows, _ := pool.Query(ctx, sql)
//	nums, err := pgx.CollectRows(rows, pgx.RowTo[int32])
//
// reports it rather than panicking on nil rows.
type errRows struct{ err error }

func (errRows) Close()                                       {}
func (r errRows) Err() error                                 { return r.err }
func (errRows) CommandTag() pgconn.CommandTag                { return pgconn.CommandTag{} }
func (errRows) FieldDescriptions() []pgconn.FieldDescription { return nil }
func (errRows) Next() bool                                   { return false }
func (r errRows) Scan(...any) error                          { return r.err }
func (r errRows) Values() ([]any, error)                     { return nil, r.err }
func (errRows) RawValues() [][]byte                          { return nil }
func (errRows) Conn() *pgx.Conn                              { return nil }
func (errRows) TypeMap() *pgtype.Map                         { return nil }

// poolRow gives its connection back when scanned.
type poolRow struct {
	row      pgx.Row
	p        *Pool
	lease    actorpool.Lease[*pooledConn]
	released bool
}

// Scan scans the row and gives the connection back, even when a
// destination's scanner panics: the connection, its result unread, is then
// closed by the pool, and the panic goes on. A second Scan gives nothing
// back again.
func (r *poolRow) Scan(dest ...any) error {
	if !r.released {
		r.released = true
		defer r.p.give(r.lease)
	}
	return r.row.Scan(dest...)
}

// errRow is the row of a query that could not take a connection.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// poolBatchResults gives its connection back when closed, unless the
// batch began a transaction: then the transaction gives it back.
type poolBatchResults struct {
	pgx.BatchResults
	p        *Pool
	lease    actorpool.Lease[*pooledConn]
	tx       *Tx // the batch's transaction, if it began one
	released bool
}

func (b *poolBatchResults) Close() error {
	err := b.BatchResults.Close()
	if b.tx == nil && !b.released {
		b.released = true
		b.p.give(b.lease)
	}
	return err
}

func (b *poolBatchResults) Tx() pgx.Tx {
	if b.tx == nil {
		return nil
	}
	return b.tx
}
