package pgpool

import (
	"context"

	"github.com/actorpool/actorpool"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A Conn is a connection taken from a Pool with Acquire, or lent by With.
// It is for one goroutine at a time, like a *pgx.Conn, and must be given
// back with Release (or Destroy, or taken out of the pool with Hijack); it
// must not be used after.
//
// A connection given back closed, busy (rows not closed) or inside a
// transaction is closed by the pool, not handed to the next caller.
type Conn struct {
	p     *Pool
	lease actorpool.Lease[*pooledConn]
	c     *pooledConn // nil once given back
}

// Release gives the connection back to the pool. A second call does
// nothing. On a Conn lent by With, or acquired on the context of a With
// callback, it gives nothing back: the outermost With does.
func (c *Conn) Release() {
	if c.c == nil {
		return
	}
	c.c = nil
	c.p.give(c.lease)
}

// Destroy gives back a connection the caller knows to be unusable, to be
// closed. A second call, or a call after Release, does nothing. On a Conn
// lent by With, or acquired on the context of a With callback, it marks
// the connection, and the outermost With destroys it.
func (c *Conn) Destroy() {
	if c.c == nil {
		return
	}
	c.c = nil
	c.lease.Destroy()
}

// Hijack takes the connection out of the pool and returns it: the pool
// forgets it, and the caller must close it. Use it for a connection that
// must be kept, such as one that LISTENs. It panics on a Conn already given
// back or hijacked, as pgxpool's does, and on one lent by a With, which
// still holds it.
func (c *Conn) Hijack() *pgx.Conn {
	if c.c == nil {
		panic("cannot hijack already released or hijacked connection")
	}
	pc, err := c.lease.Hijack()
	if err != nil {
		panic("pgpool: cannot hijack the connection: " + err.Error())
	}
	c.c = nil
	return pc.Conn
}

// Conn returns the underlying connection, for what this type does not
// wrap, or nil once the Conn was given back. It must not be used, nor
// closed, after Release.
func (c *Conn) Conn() *pgx.Conn {
	if c.c == nil {
		return nil
	}
	return c.c.Conn
}

// Exec runs sql on the connection.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return c.c.Exec(ctx, sql, args...)
}

// Query runs sql on the connection.
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return c.c.Query(ctx, sql, args...)
}

// QueryRow runs sql on the connection.
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return c.c.QueryRow(ctx, sql, args...)
}

// SendBatch sends the batch's queries on the connection.
func (c *Conn) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return c.c.SendBatch(ctx, b)
}

// CopyFrom copies rows into a table with the COPY protocol.
func (c *Conn) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	return c.c.CopyFrom(ctx, table, columns, src)
}

// Begin starts a transaction on the connection.
func (c *Conn) Begin(ctx context.Context) (pgx.Tx, error) { return c.c.Begin(ctx) }

// BeginTx starts a transaction with opts on the connection.
func (c *Conn) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	return c.c.BeginTx(ctx, opts)
}

// Ping pings the server.
func (c *Conn) Ping(ctx context.Context) error { return c.c.Ping(ctx) }
