package pgpool

import (
	"context"

	"github.com/actorpool/actorpool"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A Conn is a connection taken from a Pool with Acquire. It is for one
// goroutine at a time, like a *pgx.Conn, and must be given back with
// Release.
//
// A connection given back closed, busy (rows not closed) or inside a
// transaction is closed by the pool, not handed to the next caller.
type Conn struct {
	lease actorpool.Lease[*pooledConn]
	conn  *pgx.Conn // nil once given back
}

// Release gives the connection back to the pool. A second call does
// nothing.
func (c *Conn) Release() {
	if c.conn == nil {
		return
	}
	c.conn = nil
	c.lease.Release()
}

// Destroy gives back a connection the caller knows to be unusable, to be
// closed. A second call, or a call after Release, does nothing.
func (c *Conn) Destroy() {
	if c.conn == nil {
		return
	}
	c.conn = nil
	c.lease.Destroy()
}

// Conn returns the underlying connection, for what this type does not
// wrap. It must not be used, nor closed, after Release.
func (c *Conn) Conn() *pgx.Conn { return c.conn }

// Exec runs sql on the connection.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return c.conn.Exec(ctx, sql, args...)
}

// Query runs sql on the connection.
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return c.conn.Query(ctx, sql, args...)
}

// QueryRow runs sql on the connection.
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return c.conn.QueryRow(ctx, sql, args...)
}

// SendBatch sends the batch's queries on the connection.
func (c *Conn) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return c.conn.SendBatch(ctx, b)
}

// CopyFrom copies rows into a table with the COPY protocol.
func (c *Conn) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	return c.conn.CopyFrom(ctx, table, columns, src)
}

// Begin starts a transaction on the connection.
func (c *Conn) Begin(ctx context.Context) (pgx.Tx, error) { return c.conn.Begin(ctx) }

// BeginTx starts a transaction with opts on the connection.
func (c *Conn) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	return c.conn.BeginTx(ctx, opts)
}

// Ping pings the server.
func (c *Conn) Ping(ctx context.Context) error { return c.conn.Ping(ctx) }
