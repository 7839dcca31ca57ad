package pgpool

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/actorpool/actorpool/internal/sockpeek"
	"github.com/jackc/pgx/v5/pgconn"
)

var (
	errServerError = errors.New("pgpool: the server sent an error to an idle connection: it ended the session (a restart, pg_terminate_backend, an idle timeout)")
	errTLSData     = errors.New("pgpool: the server sent data to an idle TLS connection, which cannot be told from the goodbye of a session it ended")
)

// checkIdle looks at the socket of a connection idle since the clock last
// ticked, without a round trip and without waiting, for a session the
// server has ended: it closes the connection after sending an error, which
// pgx has not read, since no statement was running. One system call, at
// most once per connection and tick, so a busy connection costs an atomic
// load per take and give-back; a connection taken again within a tick is
// not looked at.
func (f *factory) checkIdle(c *pooledConn) error {
	now := f.clock.Now()
	if c.seen.Load() == now {
		return nil
	}
	c.seen.Store(now)
	return peek(c.PgConn())
}

// peek reports a connection whose peer closed it, or whose server sent it
// an error, unasked. Other messages the server may send an idle session —
// a notification for a LISTEN on it, a notice, a parameter status — are
// left for pgx to read with the next statement; over TLS, where they
// cannot be told apart, any data retires the connection.
func peek(pc *pgconn.PgConn) error {
	nc := pc.Conn()
	tc, isTLS := nc.(*tls.Conn)
	if isTLS {
		nc = tc.NetConn()
	}
	first, waiting, err := sockpeek.Peek(nc)
	switch {
	case err != nil:
		return fmt.Errorf("pgpool: idle connection: %w", err)
	case !waiting:
		return nil
	case isTLS:
		return errTLSData
	case first == 'E': // ErrorResponse
		return errServerError
	}
	return nil
}
