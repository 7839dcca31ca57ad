package netpool

import (
	"net"
	"sync/atomic"
	"time"
)

// A Conn is a pooled network connection. It is the net.Conn it wraps, and
// it remembers the first error a Read or Write returned: a connection that
// failed, timed out or reached the end of its stream is not handed to the
// next caller, who could read a reply meant for someone else.
//
// Deadlines set on a Conn last until it is given back: the pool clears
// them, so the next caller starts with none.
type Conn struct {
	net.Conn
	err      atomic.Pointer[connError]
	deadline bool // a deadline was set since the connection was taken
}

type connError struct{ err error }

func newConn(c net.Conn) *Conn { return &Conn{Conn: c} }

// Read reads from the connection, and records its error, if any.
func (c *Conn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.fail(err)
	}
	return n, err
}

// Write writes to the connection, and records its error, if any.
func (c *Conn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil {
		c.fail(err)
	}
	return n, err
}

// SetDeadline sets the read and write deadlines, until the connection is
// given back.
func (c *Conn) SetDeadline(t time.Time) error {
	c.deadline = true
	return c.Conn.SetDeadline(t)
}

// SetReadDeadline sets the read deadline, until the connection is given
// back.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.deadline = true
	return c.Conn.SetReadDeadline(t)
}

// SetWriteDeadline sets the write deadline, until the connection is given
// back.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.deadline = true
	return c.Conn.SetWriteDeadline(t)
}

// Err returns the first error a Read or Write on the connection returned,
// or nil. The pool does not reuse a connection whose Err is not nil.
func (c *Conn) Err() error {
	if e := c.err.Load(); e != nil {
		return e.err
	}
	return nil
}

// NetConn returns the connection the Conn wraps.
func (c *Conn) NetConn() net.Conn { return c.Conn }

// fail records err unless an error is recorded already.
func (c *Conn) fail(err error) {
	c.err.CompareAndSwap(nil, &connError{err})
}
