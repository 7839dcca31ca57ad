// Package adapter holds what the adapters — pgpool, redispool, netpool —
// do alike, so that they have one shape: a Config whose Pool field is the
// actorpool.Config, and a Pool whose With lends the same Conn as Acquire.
package adapter

import (
	"context"

	"github.com/actorpool/actorpool"
)

// Defaults fills in the settings of c that an adapter's zero Config leaves
// to the adapter: the pool's name, and its size.
func Defaults(c *actorpool.Config, name string, size func() int) {
	if c.Name == "" {
		c.Name = name
	}
	if c.MaxObjects == 0 {
		c.MaxObjects = size()
	}
}

// With is an adapter's Pool.With: it takes a connection from p, calls fn
// with the Conn that acquire — the adapter's Acquire — returns on the
// context of the callback, and gives the connection back, even when fn
// panics. That Conn holds the lease of the With: its Release gives nothing
// back, and its Destroy has the With destroy the connection. With releases
// it when fn returns, so that a Conn kept past the callback is refused as
// one given back is, rather than used on a connection that may be another
// caller's by then.
func With[T any, C interface{ Release() }](ctx context.Context, p *actorpool.Pool[T], acquire func(context.Context) (C, error), fn func(context.Context, C) error) error {
	return p.With(ctx, func(ctx context.Context, _ T) error {
		c, err := acquire(ctx)
		if err != nil {
			return err
		}
		defer c.Release()
		return fn(ctx, c)
	})
}
