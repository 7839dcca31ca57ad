package netpool

import (
	"net"

	"github.com/actorpool/actorpool"
)

// A Conn is a connection taken from a Pool with Acquire, for one goroutine
// at a time. It is a net.Conn, and it remembers the first error a Read or
// Write returned: a connection that failed, timed out or reached the end
// of its stream is destroyed when it is given back, not handed to the next
// caller, who could read a reply meant for someone else. Deadlines set on
// it last until it is given back: the pool clears them, so the next caller
// starts with none.
//
// It must be given back with Release, or with Destroy if the caller knows
// it to be unusable; it must not be used after, nor, for a Conn acquired
// on a With callback's context, after that With returns: the connection
// may be another caller's by then, and Read and Write, the net.Conn's
// own, do not check. Close closes the network
// connection, which the pool then finds closed and replaces.
type Conn struct {
	net.Conn // the pooled conn, whose Read and Write record errors; nil once given back
	c        *conn
	lease    actorpool.Lease[*conn]
}

// Release gives the connection back to the pool. A second call does
// nothing. On a Conn lent by With, or acquired on the context of a With
// callback, it gives nothing back: the outermost With does.
func (c *Conn) Release() {
	if c.c == nil {
		return
	}
	c.Conn, c.c = nil, nil
	c.lease.Release()
}

// Destroy gives back a connection the caller knows to be unusable, to be
// closed. A second call, or a call after Release, does nothing. On a Conn
// lent by With, or acquired on the context of a With callback, it marks
// the connection, and the outermost With destroys it.
func (c *Conn) Destroy() {
	if c.c == nil {
		return
	}
	c.Conn, c.c = nil, nil
	c.lease.Destroy()
}

// Err returns the first error a Read or Write on the connection returned,
// or nil. The pool does not reuse a connection whose Err is not nil.
func (c *Conn) Err() error { return c.c.broken() }

// NetConn returns the network connection the Conn wraps.
func (c *Conn) NetConn() net.Conn { return c.c.Conn }
