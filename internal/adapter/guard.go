package adapter

import (
	"errors"
	"net"
	"sync/atomic"
)

// A TestGuard keeps a connection's Test and its Destroy apart when the
// pool runs them at once. It does when Test outlives the pool's
// TestTimeout: the pool destroys the connection at the deadline, while
// Test still runs on another goroutine (see actorpool.Factory). A
// connection is not safe for that — pgx's and redigo's are for one
// goroutine at a time, a tls.Conn's Close sends a goodbye — but its socket
// is: net.Conn.Close may be called from any goroutine, and it ends the
// Read or Write that Test is stuck in. So Destroy, during a Test, closes
// only the socket, and Test's goroutine closes the connection itself once
// Test's I/O has returned.
//
// A connection goes through these states, each move a compare-and-swap,
// so neither side ever waits for the other:
//
//	idle ──Test begins──▶ testing ──Test ends──▶ idle
//	idle ──Destroy──▶ destroyed (Destroy closes the connection)
//	testing ──Destroy──▶ abandoned (Destroy closes the socket; Test's
//	                     goroutine closes the connection when Test ends)
//
// and a Test that finds the connection destroyed already (the deadline
// came before Test's goroutine ran) returns ErrDestroyed without I/O.
//
// The zero TestGuard is idle.
type TestGuard struct{ state atomic.Uint32 }

const (
	guardIdle uint32 = iota
	guardTesting
	guardAbandoned
	guardDestroyed
)

// ErrDestroyed is what TestGuard.Test returns when the connection was
// destroyed before its test began.
var ErrDestroyed = errors.New("connection destroyed before its test began: the test outlived the pool's TestTimeout")

// Test runs test, the connection's Factory.Test, unless the connection has
// been destroyed already. If Destroy comes while test runs, Test closes
// the connection with closeConn once test has returned, even by a panic.
func (g *TestGuard) Test(test func() error, closeConn func()) error {
	if !g.state.CompareAndSwap(guardIdle, guardTesting) {
		return ErrDestroyed
	}
	defer func() {
		if !g.state.CompareAndSwap(guardTesting, guardIdle) {
			closeConn() // abandoned: Destroy closed only the socket
		}
	}()
	return test()
}

// Destroy is the connection's Factory.Destroy: it closes the connection
// with closeConn, or, while Test runs, closes only socket, which ends
// Test's I/O, and leaves closeConn to Test.
func (g *TestGuard) Destroy(socket net.Conn, closeConn func()) {
	for {
		switch g.state.Load() {
		case guardIdle:
			if g.state.CompareAndSwap(guardIdle, guardDestroyed) {
				closeConn()
				return
			}
		case guardTesting:
			if g.state.CompareAndSwap(guardTesting, guardAbandoned) {
				socket.Close()
				return
			}
		default:
			return // destroyed already; the pool destroys once
		}
	}
}

// Socket returns the network connection under c, which any goroutine may
// close: c itself, or, for a connection that wraps another and says so
// with a NetConn method (tls.Conn does), the one it wraps, and so on down.
func Socket(c net.Conn) net.Conn {
	for {
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return c
		}
		inner := w.NetConn()
		if inner == nil || inner == c {
			return c
		}
		c = inner
	}
}
