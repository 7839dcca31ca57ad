package servers

import (
	"context"
	"errors"
	"fmt"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/redispool"
	redigo "github.com/gomodule/redigo/redis"
	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// prepareRedis sets Keys[i] to Values[i], all in one MSET, and deletes
// missingKey.
func prepareRedis(ctx context.Context, addr string) error {
	c, err := redigo.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("preparing Redis: connect: %w", err)
	}
	defer c.Close()
	args := make([]any, 0, 2*KeySpace)
	for i := range KeySpace {
		args = append(args, Keys[i], Values[i])
	}
	if _, err := redigo.DoContext(c, ctx, "MSET", args...); err != nil {
		return fmt.Errorf("preparing Redis: MSET of the %d keys actorpool:bench:*: %w", KeySpace, err)
	}
	if _, err := redigo.DoContext(c, ctx, "DEL", missingKey); err != nil {
		return fmt.Errorf("preparing Redis: DEL %s: %w", missingKey, err)
	}
	return nil
}

// useRedis runs a GET and a SET with get and set, on one connection, and
// checks the GET's answer: it warms a connection.
func useRedis(get func(key string) (string, error), set func(key, value string) error) error {
	v, err := get(Keys[0])
	if err != nil {
		return fmt.Errorf("GET %s: %w", Keys[0], err)
	}
	if v != Values[0] {
		return fmt.Errorf("GET %s returned %q, want %q", Keys[0], v, Values[0])
	}
	if err := set(Keys[0], Values[0]); err != nil {
		return fmt.Errorf("SET %s: %w", Keys[0], err)
	}
	return nil
}

// redigoNotFound wraps ErrNotFound around redigo's ErrNil, the error of
// redis.String for a nil reply, that is a key that does not exist.
func redigoNotFound(err error, key string) error {
	if errors.Is(err, redigo.ErrNil) {
		return fmt.Errorf("key %s: %w (%w)", key, ErrNotFound, err)
	}
	return err
}

// redispoolPool is ours: actorpool's redispool.
type redispoolPool struct{ p *redispool.Pool }

// newRedispool returns a redispool.Pool of size connections, every other
// setting at its default.
func newRedispool(addr string, size int, dial Dialer) (Pool, error) {
	p, err := redispool.NewWithConfig(&redispool.Config{Addr: addr, Dial: dial, Pool: actorpool.Config{MaxObjects: size}})
	if err != nil {
		return nil, err
	}
	return &redispoolPool{p: p}, nil
}

func (a *redispoolPool) Get(ctx context.Context, key string) (string, error) {
	v, err := redigo.String(a.p.Do(ctx, "GET", key))
	return v, redigoNotFound(err, key)
}

func (a *redispoolPool) Set(ctx context.Context, key, value string) error {
	_, err := a.p.Do(ctx, "SET", key, value)
	return err
}

// warmRedigo warms n connections taken with acquire, a redigo.Conn from
// redispool or from redigo's own pool.
func warmRedigo(ctx context.Context, n int, acquire func(context.Context) (redigo.Conn, error)) error {
	return warm(ctx, n, func(ctx context.Context) (func() error, func(), error) {
		c, err := acquire(ctx)
		if err != nil {
			return nil, nil, err
		}
		return func() error {
			return useRedis(
				func(key string) (string, error) { return redigo.String(redigo.DoContext(c, ctx, "GET", key)) },
				func(key, value string) error { _, err := redigo.DoContext(c, ctx, "SET", key, value); return err })
		}, func() { c.Close() }, nil
	})
}

func (a *redispoolPool) Warm(ctx context.Context, n int) error {
	return warmRedigo(ctx, n, func(ctx context.Context) (redigo.Conn, error) { return a.p.Acquire(ctx) })
}

func (a *redispoolPool) Open() int    { return a.p.Stats().Total }
func (a *redispoolPool) Close() error { return a.p.Close(context.Background()) }

// goRedisPool is go-redis's Client, which pools its connections.
type goRedisPool struct{ c *goredis.Client }

// newGoRedis returns a go-redis Client with PoolSize size and maintenance
// notifications off, every other setting at its default.
//
// Their default, auto, sends CLIENT MAINT_NOTIFICATIONS on each new
// connection and turns them off for the client at the first server that
// refuses it, as the Redis 7.0 measured here does: off is where auto ends
// on such a server. Left at auto, connections opened at once through
// Client.Conn, as Warm opens them, race on that switch in go-redis v9.23.0
// (a data race the race detector reports, in go-redis's initConn).
func newGoRedis(addr string, size int, dial Dialer) (Pool, error) {
	return &goRedisPool{c: goredis.NewClient(&goredis.Options{
		Addr:                     addr,
		PoolSize:                 size,
		Dialer:                   dial,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})}, nil
}

func (a *goRedisPool) Get(ctx context.Context, key string) (string, error) {
	v, err := a.c.Get(ctx, key).Result()
	if errors.Is(err, goredis.Nil) {
		return v, fmt.Errorf("key %s: %w (%w)", key, ErrNotFound, err)
	}
	return v, err
}

func (a *goRedisPool) Set(ctx context.Context, key, value string) error {
	return a.c.Set(ctx, key, value, 0).Err()
}

func (a *goRedisPool) Warm(ctx context.Context, n int) error {
	return warm(ctx, n, func(ctx context.Context) (func() error, func(), error) {
		// A Conn takes a connection from the pool at its first command
		// and keeps it until closed.
		c := a.c.Conn()
		return func() error {
			return useRedis(
				func(key string) (string, error) { return c.Get(ctx, key).Result() },
				func(key, value string) error { return c.Set(ctx, key, value, 0).Err() })
		}, func() { c.Close() }, nil
	})
}

func (a *goRedisPool) Open() int    { return int(a.c.PoolStats().TotalConns) }
func (a *goRedisPool) Close() error { return a.c.Close() }

// redigoPool is redigo's own Pool.
type redigoPool struct{ p *redigo.Pool }

// newRedigo returns a redigo Pool with MaxActive size and Wait set, so that
// a Get beyond the size waits as the other pools do instead of failing,
// and MaxIdle size, whose default of zero would close every connection
// given back.
func newRedigo(addr string, size int, dial Dialer) (Pool, error) {
	var opts []redigo.DialOption
	if dial != nil {
		opts = append(opts, redigo.DialContextFunc(dial))
	}
	return &redigoPool{p: &redigo.Pool{
		DialContext: func(ctx context.Context) (redigo.Conn, error) { return redigo.DialContext(ctx, "tcp", addr, opts...) },
		MaxIdle:     size,
		MaxActive:   size,
		Wait:        true,
	}}, nil
}

func (a *redigoPool) Get(ctx context.Context, key string) (string, error) {
	c, err := a.p.GetContext(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	v, err := redigo.String(c.Do("GET", key))
	return v, redigoNotFound(err, key)
}

func (a *redigoPool) Set(ctx context.Context, key, value string) error {
	c, err := a.p.GetContext(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Do("SET", key, value)
	return err
}

func (a *redigoPool) Warm(ctx context.Context, n int) error {
	return warmRedigo(ctx, n, a.p.GetContext)
}

func (a *redigoPool) Open() int    { return a.p.Stats().ActiveCount }
func (a *redigoPool) Close() error { return a.p.Close() }
