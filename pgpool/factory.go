package pgpool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/adapter"
	"github.com/jackc/pgx/v5"
)

// closeTimeout bounds the goodbye (a Terminate message) sent to the server
// when a connection is closed, as pgxpool bounds it; a server that does not
// take it is cut off.
const closeTimeout = 15 * time.Second

// A pooledConn is a connection as the pool holds it.
type pooledConn struct {
	*pgx.Conn

	// seen is the tick of the pool's clock at which the pool last looked
	// at the connection's socket (see checkIdle).
	seen atomic.Uint32

	// idleSince is when the connection was made or last given back, in
	// Unix nanoseconds, kept only when Config.ShouldPing is set, which is
	// told how long the connection sat idle.
	idleSince atomic.Int64

	// socket is the network connection under the pgx.Conn, which
	// Destroy may close while the health check's ping runs (guard).
	socket net.Conn
	guard  adapter.TestGuard
}

// factory makes, checks and closes the pool's connections.
type factory struct {
	cc            *pgx.ConnConfig // the pool's own copy, never changed
	beforeConnect func(context.Context, *pgx.ConnConfig) error
	afterConnect  func(context.Context, *pgx.Conn) error
	beforeClose   func(*pgx.Conn)
	values        context.Context // New's context, whose values connects see
	clock         *adapter.Clock
	trackIdle     bool // keep pooledConn.idleSince, for ShouldPing
}

// The pool finds Validate and Test through these interfaces: a change of
// either's signature must not silently turn them off.
var (
	_ actorpool.Validator[*pooledConn] = (*factory)(nil)
	_ actorpool.Tester[*pooledConn]    = (*factory)(nil)
)

// Create connects, bounded by ctx: the pool's CreateTimeout. The hooks see
// the values of the context New was given, as pgxpool's first connects do.
func (f *factory) Create(ctx context.Context) (*pooledConn, error) {
	ctx = valuesFrom{ctx, f.values}
	cc := f.cc
	if f.beforeConnect != nil {
		cc = f.cc.Copy()
		if err := f.beforeConnect(ctx, cc); err != nil {
			return nil, err
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, err
	}
	if f.afterConnect != nil {
		if err := f.afterConnect(ctx, conn); err != nil {
			conn.Close(ctx)
			return nil, err
		}
	}
	c := &pooledConn{Conn: conn, socket: adapter.Socket(conn.PgConn().Conn())}
	c.seen.Store(f.clock.Now())
	if f.trackIdle {
		c.idleSince.Store(time.Now().UnixNano())
	}
	return c, nil
}

// Destroy closes the connection; if a transaction was open on it, the
// server rolls it back.
//
// The pool destroys a connection whose health check ping outlived
// TestTimeout while the ping still runs on another goroutine, and a
// pgx.Conn must not be used by two goroutines at once. Destroy then only
// closes the socket, which is safe from any goroutine and makes the ping
// fail at once; the ping's goroutine says goodbye and closes the
// connection when the ping returns (Test, adapter.TestGuard).
func (f *factory) Destroy(c *pooledConn) {
	c.guard.Destroy(c.socket, func() { f.close(c) })
}

// close runs BeforeClose and closes the connection, bounded by
// closeTimeout.
func (f *factory) close(c *pooledConn) {
	if f.beforeClose != nil {
		f.beforeClose(c.Conn)
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	c.Close(ctx)
}

var (
	errClosed = errors.New("pgpool: connection closed")
	errBusy   = errors.New("pgpool: connection given back busy: a query's results were not read to the end, or rows not closed")
)

// Validate refuses, without a round trip, a connection that is closed,
// busy, or in a transaction, and one idle since the pool's clock last
// ticked whose session the server has ended (see checkIdle).
//
// A connection given back inside a transaction, open or failed, is
// destroyed, not rolled back: a ROLLBACK is a round trip on the path that
// gives it back, which must stay fast, and would hang there on a server
// that stopped answering; and closing the connection makes the server
// roll back and drop everything the transaction held — locks, SET LOCAL,
// temporary tables — so the next caller starts clean. A connection so
// given back is a caller's bug or a panic in mid-work, not the common
// case, and a new one costs a connect made off that path. pgxpool does the
// same.
func (f *factory) Validate(c *pooledConn) error {
	if err := fitForReuse(c); err != nil {
		return err
	}
	return f.checkIdle(c)
}

// fitForReuse reports, from memory, why a connection given back cannot be
// lent again: closed, busy, or inside a transaction.
func fitForReuse(c *pooledConn) error {
	pc := c.PgConn()
	switch {
	case pc.IsClosed():
		return errClosed
	case pc.IsBusy():
		return errBusy
	}
	if s := pc.TxStatus(); s != 'I' {
		return fmt.Errorf("pgpool: connection given back inside a transaction (status %c), not reused", s)
	}
	return nil
}

// Test pings the server, for the health check. If the pool destroyed the
// connection meanwhile, because the ping outlived TestTimeout, Destroy has
// cut its socket and left the rest to Test, which closes the connection
// once the ping has returned, now that no one else uses it.
func (f *factory) Test(ctx context.Context, c *pooledConn) error {
	return c.guard.Test(func() error {
		if err := c.Ping(ctx); err != nil {
			return fmt.Errorf("pgpool: ping: %w", err)
		}
		return nil
	}, func() { f.close(c) })
}

// valuesFrom is a context whose values are those of values, then of the
// Context it embeds, and whose deadline and cancellation are the embedded
// one's: a connect made for the pool sees the values of New's context,
// with its own timeout.
type valuesFrom struct {
	context.Context
	values context.Context
}

func (c valuesFrom) Value(key any) any {
	if c.values != nil {
		if v := c.values.Value(key); v != nil {
			return v
		}
	}
	return c.Context.Value(key)
}
