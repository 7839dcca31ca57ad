package redispool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/actorpool/actorpool/internal/adapter"
	"github.com/gomodule/redigo/redis"
)

// A conn is what the pool holds: a redigo connection, the network
// connection under it, and what the pool must know to decide, without I/O,
// whether the next caller may have it.
type conn struct {
	rc redis.Conn
	// nc is the socket under rc, under TLS too: the one thing about the
	// connection that another goroutine may touch while a command runs.
	// It is closed to interrupt a command whose context ends (redigo's
	// own DoContext closes rc instead, from a goroutine per command), and
	// by Destroy during a Test.
	nc          net.Conn
	interrupted atomic.Bool
	guard       adapter.TestGuard
	seen        atomic.Uint32 // the tick of the pool's clock when the pool last looked at the socket

	// Only the connection's holder touches these, and the pool hands a
	// connection from holder to holder with a happens-before edge.
	pending int   // commands sent whose replies are unread
	state   state // MULTI, WATCH, SUBSCRIBE or MONITOR in force
}

// A state is a set of connection states that make a connection unfit for
// the next caller: it would see queued commands, a WATCH it did not set,
// or push messages instead of replies.
type state uint8

const (
	stateWatch state = 1 << iota
	stateMulti
	stateSubscribe
	stateMonitor
)

func (s state) String() string {
	var names []string
	for _, n := range []struct {
		s    state
		name string
	}{{stateWatch, "WATCH"}, {stateMulti, "MULTI"}, {stateSubscribe, "SUBSCRIBE"}, {stateMonitor, "MONITOR"}} {
		if s&n.s != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, "+")
}

// track records how cmd changes the connection's state.
func (c *conn) track(cmd string) {
	// Most commands are none of these: the length switch keeps the
	// case-insensitive compares off their path.
	switch len(cmd) {
	case 4:
		if strings.EqualFold(cmd, "EXEC") {
			c.endMulti()
		}
	case 5:
		switch {
		case strings.EqualFold(cmd, "WATCH"):
			c.state |= stateWatch
		case strings.EqualFold(cmd, "MULTI"):
			c.state |= stateMulti
		}
	case 7:
		switch {
		case strings.EqualFold(cmd, "UNWATCH"):
			c.state &^= stateWatch
		case strings.EqualFold(cmd, "DISCARD"):
			c.endMulti()
		case strings.EqualFold(cmd, "MONITOR"):
			c.state |= stateMonitor
		}
	case 9:
		if strings.EqualFold(cmd, "SUBSCRIBE") {
			c.state |= stateSubscribe
		}
	case 10:
		if strings.EqualFold(cmd, "PSUBSCRIBE") || strings.EqualFold(cmd, "SSUBSCRIBE") {
			c.state |= stateSubscribe
		}
	}
}

// endMulti records an EXEC or DISCARD. Outside MULTI the server refuses
// both with an error reply and leaves a WATCH in force, which would abort
// the next caller's transaction.
func (c *conn) endMulti() {
	if c.state&stateMulti != 0 {
		c.state &^= stateWatch | stateMulti
	}
}

// errInterrupted is the error of a connection closed under a command whose
// context ended.
var errInterrupted = errors.New("redispool: connection closed to interrupt a command whose context ended")

// broken returns why the connection cannot be used again, or nil: redigo
// saw a network or protocol error, which it treats as fatal, or a command
// on it was interrupted.
func (c *conn) broken() error {
	// Interrupted first: the read error it causes says less.
	if c.interrupted.Load() {
		return errInterrupted
	}
	return c.rc.Err()
}

// validate reports, without I/O, whether the connection may go to the next
// caller.
func (c *conn) validate() error {
	if err := c.broken(); err != nil {
		return fmt.Errorf("redispool: connection is broken: %w", err)
	}
	if c.pending > 0 {
		return fmt.Errorf("redispool: connection given back with %d replies unread", c.pending)
	}
	if c.state != 0 {
		return fmt.Errorf("redispool: connection given back in %v state", c.state)
	}
	return nil
}

// interrupt closes the socket, which makes the command blocked on it fail
// at once. Not rc: it is not safe beside the command, and over TLS its
// Close would send a goodbye on the wire from this goroutine.
func (c *conn) interrupt() {
	c.interrupted.Store(true)
	c.nc.Close()
}

// watch arranges for ctx's end to interrupt the command about to run. The
// returned stop reports false if it did.
func (c *conn) watch(ctx context.Context) (stop func() bool, err error) {
	if ctx.Done() == nil {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.AfterFunc(ctx, c.interrupt), nil
}

// ended returns the error of a command that ran under a context which
// ended while it ran; the connection is closed under it. It marks the
// connection interrupted itself: the interrupt has started but may not
// have run yet, and the connection, given back before it did, would pass
// validate and have its socket closed under the next caller.
func (c *conn) ended(ctx context.Context, cmd string, reply any, err error) (any, error) {
	c.interrupted.Store(true)
	if err == nil {
		// The reply came before the interrupt: it is good, though the
		// connection is not.
		return reply, nil
	}
	return nil, fmt.Errorf("redispool: %s: %w (%w)", cmd, context.Cause(ctx), err)
}

// noTimeout is the timeout of do and receive that means none: a
// timeout of zero means the one the connection was dialed with.
const noTimeout = time.Duration(math.MinInt64)

// readTimeout returns the timeout of do and receive that a redigo
// connection's DoWithTimeout and ReceiveWithTimeout mean by timeout: zero
// means none.
func readTimeout(timeout time.Duration) time.Duration {
	if timeout == 0 {
		return noTimeout
	}
	return timeout
}

// do runs one command, and reads the replies to commands sent before it.
// A timeout of zero means the read timeout the connection was dialed with;
// noTimeout means none.
func (c *conn) do(ctx context.Context, timeout time.Duration, cmd string, args ...any) (any, error) {
	stop, err := c.watch(ctx)
	if err != nil {
		return nil, err
	}
	c.track(cmd)
	// Counted before redigo writes the command: if an argument's RedisArg
	// panics, the command is left half written in the buffer, where the
	// next caller's command would complete it.
	c.pending++
	var reply any
	switch timeout {
	case 0:
		reply, err = c.rc.Do(cmd, args...)
	case noTimeout:
		reply, err = redis.DoWithTimeout(c.rc, 0, cmd, args...)
	default:
		reply, err = redis.DoWithTimeout(c.rc, timeout, cmd, args...)
	}
	c.pending = 0
	if stop != nil && !stop() {
		return c.ended(ctx, cmd, reply, err)
	}
	return reply, err
}

// send writes a command to the connection's buffer, for a later flush, and
// receive.
func (c *conn) send(cmd string, args ...any) error {
	c.track(cmd)
	c.pending++
	return c.rc.Send(cmd, args...)
}

// receive reads one reply, with a timeout as do's.
func (c *conn) receive(ctx context.Context, timeout time.Duration) (any, error) {
	stop, err := c.watch(ctx)
	if err != nil {
		return nil, err
	}
	var reply any
	switch timeout {
	case 0:
		reply, err = c.rc.Receive()
	case noTimeout:
		reply, err = redis.ReceiveWithTimeout(c.rc, 0)
	default:
		reply, err = redis.ReceiveWithTimeout(c.rc, timeout)
	}
	// A reply that is an error reply still answers a command.
	var rerr redis.Error
	if (err == nil || errors.As(err, &rerr)) && c.pending > 0 {
		c.pending--
	}
	if stop != nil && !stop() {
		return c.ended(ctx, "receive", reply, err)
	}
	return reply, err
}
