package redispool

import (
	"context"
	"slices"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/adapter"
)

// A Pool is a pool of connections to one Redis server. It is safe for use
// by many goroutines.
type Pool struct {
	pool  *actorpool.Pool[*conn]
	cfg   Config
	clock *adapter.Clock
}

// New returns a pool of connections to the server at addr, "host:port" or
// a redis:// or rediss:// URL, with the defaults of a zero Config. It
// connects to nothing until a connection is asked for: New does not fail
// when the server is down.
func New(addr string) (*Pool, error) { return NewWithConfig(&Config{Addr: addr}) }

// NewWithConfig returns a pool of connections to the server cfg names.
// The pool keeps a copy of cfg: changing it afterwards changes nothing. It
// connects to nothing until a connection is asked for, except
// Config.Pool.MinIdle connections, which it opens at once in the
// background: NewWithConfig does not fail when the server is down.
func NewWithConfig(cfg *Config) (*Pool, error) { return newPool(cfg, adapter.IdleTick) }

// newPool is NewWithConfig with the period of the pool's clock; zero
// makes a clock that only a test ticks.
func newPool(cfg *Config, tick time.Duration) (*Pool, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c.DialOptions = slices.Clone(c.DialOptions)
	clock := adapter.NewClock(tick)
	p, err := actorpool.New[*conn](newFactory(&c, clock), c.Pool)
	if err != nil {
		clock.Close()
		return nil, err
	}
	return &Pool{pool: p, cfg: c, clock: clock}, nil
}

// Do runs one command on a connection from the pool and gives the
// connection back. Its result fits redigo's reply helpers:
//
//	n, err := redis.Int(pool.Do(ctx, "INCR", "visits"))
//
// An error reply from the server is a redis.Error and leaves the
// connection in the pool. A network or protocol error, or a ctx that ends
// while the command runs, closes the connection: the pool destroys it and
// will create another. Do on the context of a With callback uses that
// callback's connection.
func (p *Pool) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	l, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	// Deferred, so that a connection whose command panicked goes back, to
	// be replaced, rather than wait for the garbage collector to find its
	// lease.
	defer l.Release()
	return l.Value().do(ctx, 0, cmd, args...)
}

// Acquire takes a connection from the pool, waiting until one is free or
// ctx ends. The caller must give it back with Conn.Release. Use it for
// several commands on one connection: a pipeline, a transaction, a
// subscription.
//
// It fails with actorpool.ErrClosed, actorpool.ErrPoolExhausted, an
// *actorpool.CreateError when connecting failed, or an
// *actorpool.WaitError when ctx ended first.
func (p *Pool) Acquire(ctx context.Context) (*Conn, error) {
	l, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &Conn{lease: l, c: l.Value()}, nil
}

// With takes a connection, calls fn with it, and gives it back, even when
// fn panics. A With, Do or Acquire on the context fn receives uses the same
// connection.
func (p *Pool) With(ctx context.Context, fn func(ctx context.Context, c *Conn) error) error {
	return adapter.With(ctx, p.pool, p.Acquire, fn)
}

// Close closes the pool: takes fail from now on, idle connections are
// closed at once and connections in use when they are given back. It
// waits for them until ctx ends; see actorpool.Pool.Close.
func (p *Pool) Close(ctx context.Context) error {
	err := p.pool.Close(ctx)
	p.clock.Close()
	return err
}

// Reload replaces every connection: idle ones now, ones in use when they
// are given back. Use it after the server failed over or the password
// changed.
func (p *Pool) Reload(ctx context.Context) error { return p.pool.Reload(ctx) }

// Stats returns the pool's gauges and counters.
func (p *Pool) Stats() actorpool.Stats { return p.pool.Stats() }

// Config returns a copy of the pool's configuration, with defaults filled
// in; its DialOptions are a copy too.
func (p *Pool) Config() *Config {
	c := p.cfg
	c.DialOptions = slices.Clone(p.cfg.DialOptions)
	return &c
}
