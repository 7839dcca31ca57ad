package netpool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/actorpool/actorpool"
)

// errUnexpectedData is why an idle connection with bytes waiting is
// retired: in a request-reply protocol the peer has nothing to say to an
// idle connection, except a goodbye before it closes it.
var errUnexpectedData = errors.New("netpool: the peer sent data to an idle connection")

// factory makes, checks and closes the pool's connections.
type factory struct {
	network, addr string
	dial          func(ctx context.Context, network, addr string) (net.Conn, error)
	ping          func(ctx context.Context, c *Conn) error
}

// The pool finds Validate and Test through these interfaces: a change of
// either's signature must not silently turn them off.
var (
	_ actorpool.Validator[*conn] = (*factory)(nil)
	_ actorpool.Tester[*conn]    = (*factory)(nil)
)

// newFactory returns the factory of cfg, whose defaults are filled in.
func newFactory(cfg *Config) *factory {
	f := &factory{network: cfg.Network, addr: cfg.Addr, dial: cfg.Dial, ping: cfg.Ping}
	if f.dial == nil {
		var d net.Dialer
		f.dial = d.DialContext
	}
	return f
}

// Create dials the service.
func (f *factory) Create(ctx context.Context) (*conn, error) {
	c, err := f.dial(ctx, f.network, f.addr)
	if err != nil {
		return nil, fmt.Errorf("netpool: connect to %s: %w", f.addr, err)
	}
	if c == nil {
		return nil, fmt.Errorf("netpool: connect to %s: Dial returned no connection and no error", f.addr)
	}
	return newConn(c), nil
}

// Destroy closes the connection Dial returned. While Test runs on it (a
// Ping outlived TestTimeout), Destroy closes only the socket under it,
// which ends Ping's wait and is safe beside it, and Test closes the
// connection itself when Ping returns: what Dial returned may say goodbye
// on Close (a tls.Conn does), which must not run beside Ping's I/O.
func (f *factory) Destroy(c *conn) { c.guard.Destroy(c.socket, func() { c.Conn.Close() }) }

// Validate refuses a connection whose Read or Write failed, or that was
// closed, and clears the deadlines of one that is fit, for the next caller.
func (f *factory) Validate(c *conn) error {
	if err := c.broken(); err != nil {
		return fmt.Errorf("netpool: connection broken: %w", err)
	}
	if c.deadline {
		c.deadline = false
		if err := c.Conn.SetDeadline(time.Time{}); err != nil {
			return fmt.Errorf("netpool: clearing the connection's deadline: %w", err)
		}
	}
	return nil
}

// Test checks that the peer has not closed the connection or sent it
// anything, then runs Ping, if set, under ctx's deadline. If the pool
// destroys the connection meanwhile, Test closes it on its way out; see
// Destroy.
func (f *factory) Test(ctx context.Context, c *conn) error {
	return c.guard.Test(func() error { return f.test(ctx, c) }, func() { c.Conn.Close() })
}

func (f *factory) test(ctx context.Context, c *conn) error {
	if err := peek(c); err != nil {
		return err
	}
	if f.ping == nil {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if err := f.ping(ctx, &Conn{Conn: c, c: c}); err != nil {
		return fmt.Errorf("netpool: ping: %w", err)
	}
	// A Ping that swallowed an I/O error still leaves a broken connection.
	return f.Validate(c)
}
