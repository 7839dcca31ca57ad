package netpool

import (
	"context"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/adapter"
)

// A Pool is a pool of connections to one network service. It is safe for
// use by many goroutines.
type Pool struct {
	pool *actorpool.Pool[*conn]
	cfg  Config
}

// New returns a pool of TCP connections to addr, "host:port", with the
// defaults of a zero Config. It connects to nothing until a connection is
// asked for: New does not fail when the service is down.
func New(addr string) (*Pool, error) { return NewWithConfig(&Config{Addr: addr}) }

// NewWithConfig returns a pool of connections to the service cfg names.
// The pool keeps a copy of cfg: changing it afterwards changes nothing.
// It connects to nothing until a connection is asked for, except
// Config.Pool.MinIdle connections, which it opens at once in the
// background.
//
// A connection is not reused when a Read or Write on it failed (see Conn).
// Idle connections are checked every Config.Pool.ValidationInterval, on
// the pool's goroutines, off the path that takes and gives back
// connections: one whose peer has closed it, or sent it data unasked, is
// destroyed, and so is one that fails Config.Ping.
func NewWithConfig(cfg *Config) (*Pool, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p, err := actorpool.New[*conn](newFactory(&c), c.Pool)
	if err != nil {
		return nil, err
	}
	return &Pool{pool: p, cfg: c}, nil
}

// Acquire takes a connection from the pool, waiting until one is free or
// ctx ends. The caller must give it back with Conn.Release.
//
// It fails with actorpool.ErrClosed, actorpool.ErrPoolExhausted, an
// *actorpool.CreateError when connecting failed, or an
// *actorpool.WaitError when ctx ended first.
func (p *Pool) Acquire(ctx context.Context) (*Conn, error) {
	l, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	c := l.Value()
	return &Conn{Conn: c, c: c, lease: l}, nil
}

// With takes a connection, calls fn with it, and gives it back, even when
// fn panics. A With or Acquire on the context fn receives uses the same
// connection.
func (p *Pool) With(ctx context.Context, fn func(ctx context.Context, c *Conn) error) error {
	return adapter.With(ctx, p.pool, p.Acquire, fn)
}

// Close closes the pool: takes fail from now on, idle connections are
// closed at once and connections in use when they are given back. It
// waits for them until ctx ends; see actorpool.Pool.Close.
func (p *Pool) Close(ctx context.Context) error { return p.pool.Close(ctx) }

// Reload replaces every connection: idle ones now, ones in use when they
// are given back. Use it after the service failed over.
func (p *Pool) Reload(ctx context.Context) error { return p.pool.Reload(ctx) }

// Stats returns the pool's gauges and counters.
func (p *Pool) Stats() actorpool.Stats { return p.pool.Stats() }

// Config returns a copy of the pool's configuration, with defaults filled
// in.
func (p *Pool) Config() *Config {
	c := p.cfg
	return &c
}
