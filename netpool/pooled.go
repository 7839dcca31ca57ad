package netpool

import (
	"net"

	"github.com/actorpool/actorpool/internal/adapter"
	"sync/atomic"
	"time"
)

// A conn is what the pool holds: the network connection, and the first
// error a Read or Write on it returned, so that a connection that failed,
// timed out or reached the end of its stream is not handed to the next
// caller, who could read a reply meant for someone else.
type conn struct {
	net.Conn
	err      atomic.Pointer[connError]
	deadline bool // a deadline was set since the connection was taken

	// socket is the network connection under Conn (Conn itself unless it
	// wraps one, as a tls.Conn does): Destroy closes it, not Conn, while
	// Test runs (see factory.Destroy).
	socket net.Conn
	guard  adapter.TestGuard
}

type connError struct{ err error }

func newConn(c net.Conn) *conn { return &conn{Conn: c, socket: adapter.Socket(c)} }

// Read reads from the connection, and records its error, if any.
func (c *conn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.fail(err)
	}
	return n, err
}

// Write writes to the connection, and records its error, if any.
func (c *conn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil {
		c.fail(err)
	}
	return n, err
}

// Close closes the connection, and records it as closed, so that the
// pool destroys it when it is given back rather than lend it again.
func (c *conn) Close() error {
	c.fail(net.ErrClosed)
	return c.Conn.Close()
}

// SetDeadline sets the read and write deadlines, until the connection is
// given back.
func (c *conn) SetDeadline(t time.Time) error {
	c.deadline = true
	return c.Conn.SetDeadline(t)
}

// SetReadDeadline sets the read deadline, until the connection is given
// back.
func (c *conn) SetReadDeadline(t time.Time) error {
	c.deadline = true
	return c.Conn.SetReadDeadline(t)
}

// SetWriteDeadline sets the write deadline, until the connection is given
// back.
func (c *conn) SetWriteDeadline(t time.Time) error {
	c.deadline = true
	return c.Conn.SetWriteDeadline(t)
}

// broken returns the first error a Read or Write on the connection
// returned, or nil.
func (c *conn) broken() error {
	if e := c.err.Load(); e != nil {
		return e.err
	}
	return nil
}

// fail records err unless an error is recorded already.
func (c *conn) fail(err error) {
	c.err.CompareAndSwap(nil, &connError{err})
}
