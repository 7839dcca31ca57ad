package testenv

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A FragileConn is a net.Conn wrapped as a protocol client wraps its
// socket — a tls.Conn, pgx's connection, a line protocol's client — whose
// Close says goodbye on the wire, and so, like theirs, must not run beside
// a Read or Write on another goroutine. It records a Close that does, and
// (through an unguarded field, as such clients have) the race detector
// reports it too. NetConn returns the socket under it, which any goroutine
// may close, as tls.Conn's does.
//
// It checks the contract of actorpool.Factory: a Destroy that runs while
// Test is still running closes only the socket.
type FragileConn struct {
	sock net.Conn

	closed   bool // unguarded on purpose: Close beside a Read is a data race
	inFlight atomic.Int32
	reading  atomic.Int32
	closes   atomic.Int32
	beside   atomic.Int32 // Closes that ran while a Read or Write was in flight
}

// goodbye is what a FragileConn writes when it is closed.
var goodbye = []byte("QUIT\r\n")

// NewFragileConn wraps sock.
func NewFragileConn(sock net.Conn) *FragileConn { return &FragileConn{sock: sock} }

// NetConn returns the socket under c.
func (c *FragileConn) NetConn() net.Conn { return c.sock }

// Read reads from the socket.
func (c *FragileConn) Read(b []byte) (int, error) {
	c.inFlight.Add(1)
	c.reading.Add(1)
	defer c.inFlight.Add(-1)
	defer c.reading.Add(-1)
	if c.closed {
		return 0, net.ErrClosed
	}
	return c.sock.Read(b)
}

// Write writes to the socket.
func (c *FragileConn) Write(b []byte) (int, error) {
	c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	if c.closed {
		return 0, net.ErrClosed
	}
	return c.sock.Write(b)
}

// Close says goodbye and closes the socket.
func (c *FragileConn) Close() error {
	if c.inFlight.Load() > 0 {
		c.beside.Add(1)
	}
	c.closes.Add(1)
	if !c.closed {
		c.closed = true
		c.sock.Write(goodbye)
	}
	return c.sock.Close()
}

// Reading reports whether a Read is in flight: a goroutine is blocked
// waiting for the peer, or about to be.
func (c *FragileConn) Reading() bool { return c.reading.Load() > 0 }

// Check fails t unless c was closed, and never beside a Read or Write.
func (c *FragileConn) Check(t testing.TB) {
	t.Helper()
	if n := c.beside.Load(); n > 0 {
		t.Errorf("connection closed %d times beside a Read or Write on another goroutine: only its socket may be closed then", n)
	}
	if c.closes.Load() == 0 {
		t.Error("connection never closed")
	}
}

// LocalAddr returns the socket's local address.
func (c *FragileConn) LocalAddr() net.Addr { return c.sock.LocalAddr() }

// RemoteAddr returns the socket's remote address.
func (c *FragileConn) RemoteAddr() net.Addr { return c.sock.RemoteAddr() }

// SetDeadline sets the socket's deadlines; deadlines are safe beside I/O.
func (c *FragileConn) SetDeadline(t time.Time) error { return c.sock.SetDeadline(t) }

// SetReadDeadline sets the socket's read deadline.
func (c *FragileConn) SetReadDeadline(t time.Time) error { return c.sock.SetReadDeadline(t) }

// SetWriteDeadline sets the socket's write deadline.
func (c *FragileConn) SetWriteDeadline(t time.Time) error { return c.sock.SetWriteDeadline(t) }

// A FragileDialer dials TCP connections and wraps each in a FragileConn,
// keeping them all for Check.
type FragileDialer struct {
	mu    sync.Mutex
	conns []*FragileConn
}

// Dial is a DialFunc.
func (d *FragileDialer) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	sock, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := NewFragileConn(sock)
	d.mu.Lock()
	d.conns = append(d.conns, c)
	d.mu.Unlock()
	return c, nil
}

// Conns returns the connections dialed so far.
func (d *FragileDialer) Conns() []*FragileConn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*FragileConn(nil), d.conns...)
}

// Check checks every connection dialed (see FragileConn.Check); call it
// once the pool that dialed them is closed.
func (d *FragileDialer) Check(t testing.TB) {
	t.Helper()
	for _, c := range d.Conns() {
		c.Check(t)
	}
}
