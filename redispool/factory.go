package redispool

import (
	"cmp"
	"context"
	"fmt"
	"net"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/adapter"
	"github.com/gomodule/redigo/redis"
)

// factory makes, checks and closes the pool's connections.
type factory struct {
	network, addr string
	url           bool // addr is a redis:// or rediss:// URL
	dial          func(ctx context.Context, network, addr string) (net.Conn, error)
	opts          []redis.DialOption
	clock         *adapter.Clock
}

// The pool finds Validate and Test through these interfaces: a change of
// either's signature must not silently turn them off.
var (
	_ actorpool.Validator[*conn] = (*factory)(nil)
	_ actorpool.Tester[*conn]    = (*factory)(nil)
)

// newFactory returns the factory of cfg, whose connections are looked at
// when idle across a tick of clock.
func newFactory(cfg *Config, clock *adapter.Clock) *factory {
	f := &factory{network: cfg.Network, addr: cfg.Addr, dial: cfg.Dial, opts: cfg.DialOptions, clock: clock}
	if f.network == "" {
		f.network = "tcp"
	}
	f.url = isURL(cfg.Addr)
	if f.dial == nil {
		var d net.Dialer
		f.dial = d.DialContext
	}
	return f
}

// Create dials the server and runs the handshake the dial options ask for
// (AUTH, CLIENT SETNAME, SELECT), all bounded by ctx: the pool's
// CreateTimeout is the connect timeout.
func (f *factory) Create(ctx context.Context) (*conn, error) {
	var nc net.Conn
	// stop stops closing nc when ctx ends: redigo's TLS handshake does not
	// watch ctx (it has a timeout of its own), so the socket is closed
	// under it. It reports false if ctx ended and nc is being closed.
	stop := func() bool { return true }
	// The last dial option wins: this one keeps hold of the network
	// connection, which do closes to interrupt a command.
	opts := append(f.opts[:len(f.opts):len(f.opts)], redis.DialContextFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := f.dial(ctx, network, addr)
		nc = c
		if err == nil && c != nil {
			stop = context.AfterFunc(ctx, func() { c.Close() })
		}
		return c, err
	}))
	var rc redis.Conn
	var err error
	if f.url {
		rc, err = redis.DialURLContext(ctx, f.addr, opts...)
	} else {
		rc, err = redis.DialContext(ctx, f.network, f.addr, opts...)
	}
	if !stop() {
		if err == nil {
			rc.Close()
		}
		err = fmt.Errorf("%w (%w)", context.Cause(ctx), cmp.Or(err, net.ErrClosed))
	}
	if err != nil {
		return nil, fmt.Errorf("redispool: connect to %s: %w", redact(f.network, f.addr), err)
	}
	c := &conn{rc: rc, nc: adapter.Socket(nc)}
	c.seen.Store(f.clock.Now())
	return c, nil
}

// Destroy closes the connection without a QUIT: the pool destroys broken
// connections too, and a round trip on those could only fail. While Test
// runs on the connection (it outlived TestTimeout), Destroy closes only
// the socket, which ends Test's wait, and Test closes the connection when
// it returns.
func (f *factory) Destroy(c *conn) { c.guard.Destroy(c.nc, func() { c.rc.Close() }) }

// Validate refuses, without I/O, a connection that saw a network or
// protocol error, was interrupted, has replies unread, or is in a
// transaction, a subscription or MONITOR. Cleaning such a connection
// (reading the replies, DISCARD, UNSUBSCRIBE) would need round trips on the
// path that gives it back; a new connection costs one connect, off that
// path. It also refuses one idle since the pool's clock last ticked whose
// session the server has ended (see checkIdle).
func (f *factory) Validate(c *conn) error {
	if err := c.validate(); err != nil {
		return err
	}
	return f.checkIdle(c)
}

// Test sends PING and expects PONG. If the pool destroys the connection
// meanwhile (the PING outlived TestTimeout), Test closes it on its way
// out; see Destroy.
func (f *factory) Test(ctx context.Context, c *conn) error {
	return c.guard.Test(func() error { return ping(ctx, c) }, func() { c.rc.Close() })
}

// ping sends PING and expects PONG.
func ping(ctx context.Context, c *conn) error {
	reply, err := c.do(ctx, 0, "PING")
	if err != nil {
		return fmt.Errorf("redispool: PING: %w", err)
	}
	if s, ok := reply.(string); !ok || s != "PONG" {
		return fmt.Errorf("redispool: PING answered %v, want PONG", reply)
	}
	return nil
}
