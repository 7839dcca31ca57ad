package pgpool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/jackc/pgx/v5"
)

// closeTimeout bounds the goodbye (a Terminate message) sent to the server
// when a connection is destroyed; a server that does not take it is cut
// off.
const closeTimeout = 5 * time.Second

// factory makes, checks and closes the pool's connections.
type factory struct {
	cc            *pgx.ConnConfig // the pool's own copy, never changed
	beforeConnect func(ctx context.Context, cc *pgx.ConnConfig) error
	afterConnect  func(ctx context.Context, conn *pgx.Conn) error
	clock         *clock
}

// The pool finds Validate and Test through these interfaces: a change of
// either's signature must not silently turn them off.
var (
	_ actorpool.Validator[*pooledConn] = (*factory)(nil)
	_ actorpool.Tester[*pooledConn]    = (*factory)(nil)
)

// Create connects, bounded by ctx: the pool's CreateTimeout is the connect
// timeout.
func (f *factory) Create(ctx context.Context) (*pooledConn, error) {
	cc := f.cc
	if f.beforeConnect != nil {
		cc = f.cc.Copy()
		if err := f.beforeConnect(ctx, cc); err != nil {
			return nil, fmt.Errorf("pgpool: BeforeConnect: %w", err)
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, err
	}
	c := &pooledConn{Conn: conn}
	c.seen.Store(f.clock.now.Load())
	if f.afterConnect != nil {
		if err := f.afterConnect(ctx, conn); err != nil {
			f.Destroy(c)
			return nil, fmt.Errorf("pgpool: AfterConnect: %w", err)
		}
	}
	return c, nil
}

// Destroy closes the connection. If a transaction was open on it, the
// server rolls it back.
func (f *factory) Destroy(c *pooledConn) {
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
	return f.checkIdle(c)
}

// Test pings the server.
func (f *factory) Test(ctx context.Context, c *pooledConn) error {
	if err := c.Ping(ctx); err != nil {
		return fmt.Errorf("pgpool: ping: %w", err)
	}
	return nil
}
