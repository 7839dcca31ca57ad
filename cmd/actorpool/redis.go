package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/redispool"
)

// redisBackend loads a Redis server, embedded or real, through two
// redispool pools. A request is a page view by a signed-in user: read the
// session, create it if missing, count the view. An audit write appends a
// record to a capped list.
type redisBackend struct {
	server   *miniredis.Miniredis // nil for a real server
	addr     string
	prefix   string // of every key the demo writes
	requests *redispool.Pool
	audits   *redispool.Pool
}

// newRedisBackend starts an embedded server when addr is empty.
func newRedisBackend(ctx context.Context, addr string, reqCfg, auditCfg actorpool.Config) (*redisBackend, error) {
	b := &redisBackend{addr: addr, prefix: "actorpool-demo:" + runID() + ":"}
	if addr == "" {
		s, err := miniredis.Run()
		if err != nil {
			return nil, fmt.Errorf("starting the embedded Redis server: %w", err)
		}
		b.server, b.addr = s, s.Addr()
	}
	var err error
	b.requests, err = redispool.NewWithConfig(&redispool.Config{Addr: b.addr, Pool: reqCfg})
	if err == nil {
		b.audits, err = redispool.NewWithConfig(&redispool.Config{Addr: b.addr, Pool: auditCfg})
	}
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		_, err = redis.String(b.requests.Do(pctx, "PING"))
		cancel()
		if err != nil {
			err = fmt.Errorf("cannot reach Redis at %s: %w; is the server running? Leave out --redis to use the embedded one", b.addr, err)
		}
	}
	if err != nil {
		b.close(context.Background())
		return nil, err
	}
	return b, nil
}

func (b *redisBackend) scratch() string {
	if b.server != nil {
		return ""
	}
	return "keys " + b.prefix + "*"
}

func (b *redisBackend) describe() string {
	if b.server != nil {
		return "embedded Redis (miniredis) at " + b.addr
	}
	return "Redis at " + b.addr
}

func (b *redisBackend) request(ctx context.Context, r *request) error {
	return b.requests.With(ctx, func(ctx context.Context, c *redispool.Conn) error {
		r.got = now()
		session := b.prefix + "session:" + strconv.Itoa(r.user)
		v, err := c.Do("GET", session)
		if err != nil {
			return fmt.Errorf("reading a session: %w", err)
		}
		if v == nil {
			if _, err := c.Do("SET", session, runID(), "EX", 600); err != nil {
				return fmt.Errorf("creating a session: %w", err)
			}
		}
		if _, err := c.Do("HINCRBY", b.prefix+"views", r.page, 1); err != nil {
			return fmt.Errorf("counting a view: %w", err)
		}
		return nil
	})
}

// auditLen caps the audit list, so that a long run against a real server
// does not fill it.
const auditLen = 10000

func (b *redisBackend) audit(ctx context.Context, e auditEvent) error {
	record, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return b.audits.With(ctx, func(ctx context.Context, c *redispool.Conn) error {
		// One round trip: both commands go in one write. The newest
		// records are kept at the tail: appending is cheap in every
		// server, prepending is not in all.
		c.Send("RPUSH", b.prefix+"audit", record)
		c.Send("LTRIM", b.prefix+"audit", -auditLen, -1)
		if _, err := c.Do(""); err != nil {
			return fmt.Errorf("writing an audit record: %w", err)
		}
		return nil
	})
}

func (b *redisBackend) stats() (actorpool.Stats, actorpool.Stats) {
	return b.requests.Stats(), b.audits.Stats()
}

// removeKeys deletes every key the run may have written: its views, its
// audit list and a session for each user, a thousand keys a command.
// Sessions would expire by themselves, but not before another run, or a
// test, looked for what this one left.
func (b *redisBackend) removeKeys(ctx context.Context) error {
	keys := []any{b.prefix + "views", b.prefix + "audit"}
	for u := range numUsers {
		keys = append(keys, b.prefix+"session:"+strconv.Itoa(u))
	}
	for chunk := range slices.Chunk(keys, 1000) {
		if _, err := b.requests.Do(ctx, "DEL", chunk...); err != nil {
			return err
		}
	}
	return nil
}

func (b *redisBackend) close(ctx context.Context) error {
	var errs []error
	if b.server == nil && b.requests != nil {
		if err := b.removeKeys(ctx); err != nil && !errors.Is(err, actorpool.ErrClosed) {
			errs = append(errs, fmt.Errorf("removing the demo's keys: %w", err))
		}
	}
	for _, p := range []*redispool.Pool{b.requests, b.audits} {
		if p != nil {
			if err := p.Close(ctx); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if b.server != nil {
		b.server.Close()
	}
	return errors.Join(errs...)
}

// runID returns a random name for what one run writes, so that runs
// against one server do not mix.
func runID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
