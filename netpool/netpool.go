package netpool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/actorpool/actorpool"
)

// Config says where to connect, how, and how to check and pool the
// connections.
type Config struct {
	// Network and Addr name the service, as for net.Dial: "tcp" and
	// "host:port", "unix" and a socket path. Zero Network means "tcp".
	Network, Addr string

	// Dial opens a connection, and may run the protocol's handshake on it
	// (a TLS handshake, a login). Nil means a zero net.Dialer's
	// DialContext. Its context ends after Pool.CreateTimeout: that is the
	// connect timeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// Ping, if set, checks an idle connection with a round trip of the
	// service's protocol. The pool calls it every Pool.ValidationInterval,
	// after checking that the peer has not closed the connection; the
	// connection's deadline is set to its context's for the call.
	Ping func(ctx context.Context, c *Conn) error

	// Pool sizes the pool and sets its timeouts and housekeeping, as
	// actorpool.Config documents; Pool.MaxObjects is required. Zero
	// Pool.Name means "netpool". Pool.ValidationInterval sets how often
	// idle connections are checked; zero means never.
	Pool actorpool.Config
}

// errUnexpectedData is why an idle connection with bytes waiting is
// retired: in a request-reply protocol the peer has nothing to say to an
// idle connection, except a goodbye before it closes it.
var errUnexpectedData = errors.New("netpool: the peer sent data to an idle connection")

// New returns a pool of connections to the service cfg names.
//
// A connection is not reused when a Read or Write on it failed (see Conn).
// Idle connections are checked every Config.Pool.ValidationInterval, on
// the pool's goroutines, off the path that takes and gives back
// connections: one whose peer has closed it, or sent it data unasked, is
// destroyed, and so is one that fails Config.Ping.
func New(cfg Config) (*actorpool.Pool[*Conn], error) {
	f, err := newFactory(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Pool.Name == "" {
		cfg.Pool.Name = "netpool"
	}
	return actorpool.New[*Conn](f, cfg.Pool)
}

// factory makes, checks and closes the pool's connections.
type factory struct {
	network, addr string
	dial          func(ctx context.Context, network, addr string) (net.Conn, error)
	ping          func(ctx context.Context, c *Conn) error
}

// The pool finds Validate and Test through these interfaces: a change of
// either's signature must not silently turn them off.
var (
	_ actorpool.Validator[*Conn] = (*factory)(nil)
	_ actorpool.Tester[*Conn]    = (*factory)(nil)
)

func newFactory(cfg Config) (*factory, error) {
	if cfg.Addr == "" {
		return nil, errors.New(`netpool: Config.Addr is empty: want an address such as "host:port"`)
	}
	f := &factory{network: cfg.Network, addr: cfg.Addr, dial: cfg.Dial, ping: cfg.Ping}
	if f.network == "" {
		f.network = "tcp"
	}
	if f.dial == nil {
		var d net.Dialer
		f.dial = d.DialContext
	}
	return f, nil
}

// Create dials the service.
func (f *factory) Create(ctx context.Context) (*Conn, error) {
	c, err := f.dial(ctx, f.network, f.addr)
	if err != nil {
		return nil, fmt.Errorf("netpool: connect to %s: %w", f.addr, err)
	}
	if c == nil {
		return nil, fmt.Errorf("netpool: connect to %s: Dial returned no connection and no error", f.addr)
	}
	return newConn(c), nil
}

// Destroy closes the connection.
func (f *factory) Destroy(c *Conn) { c.Conn.Close() }

// Validate refuses a connection whose Read or Write failed, and clears the
// deadlines of one that is fit, for the next caller.
func (f *factory) Validate(c *Conn) error {
	if err := c.Err(); err != nil {
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
// anything, then runs Ping, if set, under ctx's deadline.
func (f *factory) Test(ctx context.Context, c *Conn) error {
	if err := peek(c); err != nil {
		return err
	}
	if f.ping == nil {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if err := f.ping(ctx, c); err != nil {
		return fmt.Errorf("netpool: ping: %w", err)
	}
	// A Ping that swallowed an I/O error still leaves a broken connection.
	return f.Validate(c)
}
