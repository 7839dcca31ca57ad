package redispool

import (
	"context"
	"errors"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/gomodule/redigo/redis"
)

// A Conn is a connection taken from a Pool with Acquire. It is a
// redis.Conn, and also a redis.ConnWithContext and a redis.ConnWithTimeout,
// so redigo's helpers work with it: redis.String, redis.Values,
// redis.Script, redis.PubSubConn. It must be given back with Release, or
// with Destroy if the caller knows it to be unusable; Close, which redigo's
// helpers call, is Release.
//
// A Conn is for one goroutine at a time, like a redigo connection. The pool
// does not reuse a connection given back broken (a network or protocol
// error, an interrupted command), with replies unread, or in a MULTI,
// WATCH, SUBSCRIBE or MONITOR state: it closes it and opens another.
type Conn struct {
	lease actorpool.Lease[*conn]
	c     *conn // nil once given back
}

// ErrConnClosed is returned by a Conn's methods after it was given back.
var ErrConnClosed = errors.New("redispool: connection used after Close")

var (
	_ redis.Conn            = (*Conn)(nil)
	_ redis.ConnWithContext = (*Conn)(nil)
	_ redis.ConnWithTimeout = (*Conn)(nil)
)

// Release gives the connection back to the pool. A second call does
// nothing. On a Conn lent by With, or acquired on the context of a With
// callback, it gives nothing back: the outermost With does.
func (c *Conn) Release() { c.Close() }

// Close is Release, for redis.Conn, and returns ErrConnClosed if the
// connection was already given back.
func (c *Conn) Close() error {
	if c.live() == nil {
		return ErrConnClosed
	}
	c.c = nil
	return c.lease.Release()
}

// Destroy gives back a connection the caller knows to be unusable, to be
// closed. A second call, or a call after Release, does nothing. On a Conn
// lent by With, or acquired on the context of a With callback, it marks
// the connection, and the outermost With destroys it.
func (c *Conn) Destroy() {
	if c.live() == nil {
		return
	}
	c.c = nil
	c.lease.Destroy()
}

// live returns the connection, or nil once it was given back: by this
// Conn, or, for one lent by With or acquired on a With callback's
// context, by that With, after which the connection may be another
// caller's. Such a Conn's lease is the With's, and reads as given back
// from then on.
func (c *Conn) live() *conn {
	if c.c != nil && c.lease.Nested() && c.lease.Value() == nil {
		c.c = nil
	}
	return c.c
}

// Err returns a non-nil error if the connection is broken: the pool will
// not reuse it.
func (c *Conn) Err() error {
	if c.live() == nil {
		return ErrConnClosed
	}
	return c.c.broken()
}

// Do sends a command, reads the replies to the commands sent before it
// with Send, and returns the reply to this one. With an empty cmd it
// flushes and reads the pending replies only.
func (c *Conn) Do(cmd string, args ...any) (any, error) {
	return c.DoContext(context.Background(), cmd, args...)
}

// DoContext is Do bounded by ctx: if ctx ends first, the connection is
// closed under the command, which fails with ctx's error, and the pool will
// not reuse it.
func (c *Conn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	if c.live() == nil {
		return nil, ErrConnClosed
	}
	return c.c.do(ctx, 0, cmd, args...)
}

// DoWithTimeout is Do with a read timeout of its own, instead of the one
// the connection was dialed with; zero means none, as for a redigo
// connection.
func (c *Conn) DoWithTimeout(timeout time.Duration, cmd string, args ...any) (any, error) {
	if c.live() == nil {
		return nil, ErrConnClosed
	}
	return c.c.do(context.Background(), readTimeout(timeout), cmd, args...)
}

// Send writes a command to the connection's output buffer.
func (c *Conn) Send(cmd string, args ...any) error {
	if c.live() == nil {
		return ErrConnClosed
	}
	return c.c.send(cmd, args...)
}

// Flush writes the output buffer to the server.
func (c *Conn) Flush() error {
	if c.live() == nil {
		return ErrConnClosed
	}
	return c.c.rc.Flush()
}

// Receive reads one reply.
func (c *Conn) Receive() (any, error) {
	return c.ReceiveContext(context.Background())
}

// ReceiveContext is Receive bounded by ctx, as DoContext is.
func (c *Conn) ReceiveContext(ctx context.Context) (any, error) {
	if c.live() == nil {
		return nil, ErrConnClosed
	}
	return c.c.receive(ctx, 0)
}

// ReceiveWithTimeout is Receive with a read timeout of its own; zero
// means none, as for a redigo connection.
func (c *Conn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	if c.live() == nil {
		return nil, ErrConnClosed
	}
	return c.c.receive(context.Background(), readTimeout(timeout))
}
