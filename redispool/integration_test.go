package redispool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/adapter"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/gomodule/redigo/redis"
)

var testSeq atomic.Int64

// testName returns a name no other test run uses, for keys and client
// names.
func testName(t testing.TB) string {
	return fmt.Sprintf("actorpool-test-%d-%d", time.Now().UnixNano(), testSeq.Add(1))
}

// newRedisPool returns a pool on the server at addr, whose connections
// carry name as their client name and are opened by dial if not nil,
// closed when t ends.
func newRedisPool(t testing.TB, addr, name string, cfg actorpool.Config, dial testenv.DialFunc) *Pool {
	t.Helper()
	return openRedisPool(t, addr, name, cfg, dial, adapter.IdleTick)
}

// newRedisPoolStill is newRedisPool with a clock that ticks only when the
// test calls p.clock.Tick.
func newRedisPoolStill(t testing.TB, addr, name string, cfg actorpool.Config, dial testenv.DialFunc) *Pool {
	t.Helper()
	return openRedisPool(t, addr, name, cfg, dial, 0)
}

func openRedisPool(t testing.TB, addr, name string, cfg actorpool.Config, dial testenv.DialFunc, tick time.Duration) *Pool {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	p, err := newPool(&Config{Addr: addr, Dial: dial, DialOptions: []redis.DialOption{redis.DialClientName(name)}, Pool: cfg}, tick)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CloseAtEnd(t, 10*time.Second, p.Close)
	return p
}

// testLogger sends a pool's log to the test's output.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// admin returns a plain redigo connection for the test's own look-ups.
func admin(t testing.TB, addr string) redis.Conn {
	t.Helper()
	c, err := redis.Dial("tcp", addr, redis.DialConnectTimeout(5*time.Second), redis.DialReadTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// clientIDs returns the ids of the server's clients named name, and with
// every field of want (such as "flags=b") when given.
func clientIDs(t testing.TB, c redis.Conn, name string, want ...string) []string {
	t.Helper()
	list, err := redis.String(c.Do("CLIENT", "LIST"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for line := range strings.Lines(list) {
		var id string
		matched := 0
		for f := range strings.FieldsSeq(line) {
			if v, ok := strings.CutPrefix(f, "id="); ok {
				id = v
			}
			if f == "name="+name || slices.Contains(want, f) {
				matched++
			}
		}
		if matched == 1+len(want) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func clientID(t *testing.T, c redis.Conn) int64 {
	t.Helper()
	id, err := redis.Int64(c.Do("CLIENT", "ID"))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestRedisCommands(t *testing.T) {
	addr := testenv.Redis(t)
	testenv.CheckGoroutines(t)
	name := testName(t)
	p := newRedisPool(t, addr, name, actorpool.Config{MaxObjects: 2}, nil)
	ctx := context.Background()
	key := name + ":k"
	defer p.Do(ctx, "DEL", key, key+":n")

	if _, err := p.Do(ctx, "SET", key, "v"); err != nil {
		t.Fatal(err)
	}
	if v, err := redis.String(p.Do(ctx, "GET", key)); err != nil || v != "v" {
		t.Errorf("GET = %q, %v; want v", v, err)
	}

	// An error reply is a redis.Error and keeps the connection.
	_, err := p.Do(ctx, "INCR", key)
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		t.Errorf("INCR on a string: %v, want a redis.Error", err)
	}

	// A pipeline on one connection.
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c.Send("INCR", key+":n")
	}
	c.Flush()
	for want := int64(1); want <= 3; want++ {
		if n, err := redis.Int64(c.Receive()); err != nil || n != want {
			t.Errorf("pipelined INCR = %d, %v; want %d", n, err, want)
		}
	}
	// A transaction, and a script: redigo's helpers take a *Conn.
	c.Send("MULTI")
	c.Send("INCR", key+":n")
	c.Send("INCR", key+":n")
	if vs, err := redis.Int64s(c.Do("EXEC")); err != nil || !slices.Equal(vs, []int64{4, 5}) {
		t.Errorf("MULTI/EXEC = %v, %v; want [4 5]", vs, err)
	}
	script := redis.NewScript(1, `return redis.call("INCRBY", KEYS[1], ARGV[1])`)
	if n, err := redis.Int64(script.Do(c, key+":n", 10)); err != nil || n != 15 {
		t.Errorf("script = %d, %v; want 15", n, err)
	}
	c.Close()

	if st := p.Stats(); st.Destroyed != 0 || st.Created > 2 {
		t.Errorf("created %d, destroyed %d; want at most 2 and none: error replies, pipelines and transactions leave connections usable", st.Created, st.Destroyed)
	}
}

// TestRedisAbandonedTransaction checks that a connection given back inside
// MULTI is not handed to the next caller, and that what it queued never
// runs.
func TestRedisAbandonedTransaction(t *testing.T) {
	addr := testenv.Redis(t)
	name := testName(t)
	p := newRedisPool(t, addr, name, actorpool.Config{MaxObjects: 1}, nil)
	ctx := context.Background()
	key := name + ":k"
	defer p.Do(ctx, "DEL", key)

	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := clientID(t, c)
	c.Do("MULTI")
	if q, err := redis.String(c.Do("SET", key, "queued")); err != nil || q != "QUEUED" {
		t.Fatalf("SET in MULTI = %q, %v; want QUEUED", q, err)
	}
	c.Close()

	c, err = p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if id := clientID(t, c); id == first {
		t.Errorf("the next caller got the connection given back inside MULTI (client %d)", id)
	}
	if n, err := redis.Int(c.Do("EXISTS", key)); err != nil || n != 0 {
		t.Errorf("EXISTS = %d, %v: the abandoned transaction ran", n, err)
	}
	if st := p.Stats(); st.DestroyedBy.Invalid != 1 {
		t.Errorf("destroyed as invalid: %d, want 1", st.DestroyedBy.Invalid)
	}
}

// TestRedisSubscriber checks that redigo's PubSubConn works on a pooled
// connection, and that the subscribed connection is not reused.
func TestRedisSubscriber(t *testing.T) {
	addr := testenv.Redis(t)
	name := testName(t)
	p := newRedisPool(t, addr, name, actorpool.Config{MaxObjects: 2}, nil)
	ctx := context.Background()

	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	psc := redis.PubSubConn{Conn: c}
	if err := psc.Subscribe(name); err != nil {
		t.Fatal(err)
	}
	if _, ok := psc.Receive().(redis.Subscription); !ok {
		t.Fatal("no subscription confirmation")
	}
	if _, err := p.Do(ctx, "PUBLISH", name, "hello"); err != nil {
		t.Fatal(err)
	}
	switch m := psc.ReceiveWithTimeout(10 * time.Second).(type) {
	case redis.Message:
		if string(m.Data) != "hello" {
			t.Errorf("message %q, want hello", m.Data)
		}
	default:
		t.Errorf("received %v, want a message", m)
	}
	c.Close()
	testenv.Eventually(t, 10*time.Second, "the subscribed connection to be destroyed", func() bool {
		return p.Stats().DestroyedBy.Invalid == 1
	})
}

// TestRedisTestPings checks that the pool PINGs idle connections every
// ValidationInterval and keeps those that answer.
func TestRedisTestPings(t *testing.T) {
	addr := testenv.Redis(t)
	name := testName(t)
	p := newRedisPool(t, addr, name, actorpool.Config{MaxObjects: 2, MinIdle: 2, ValidationInterval: 10 * time.Millisecond}, nil)
	testenv.Eventually(t, 10*time.Second, "idle connections to be tested", func() bool { return p.Stats().Tests >= 6 })
	if st := p.Stats(); st.Destroyed != 0 || st.Created != 2 {
		t.Errorf("created %d, destroyed %d; want 2, 0: healthy connections pass the PING", st.Created, st.Destroyed)
	}
}

// TestRedisWatchOutlivesFailedEnd checks that a connection given back
// after a WATCH and an EXEC or DISCARD sent outside MULTI is not handed
// to the next caller as clean: the server refuses those without
// unwatching, so the next caller's transaction would abort because of a
// key it never watched.
func TestRedisWatchOutlivesFailedEnd(t *testing.T) {
	addr := testenv.Redis(t)
	for _, end := range []string{"DISCARD", "EXEC"} {
		t.Run(end, func(t *testing.T) {
			name := testName(t)
			p := newRedisPool(t, addr, name, actorpool.Config{MaxObjects: 1}, nil)
			ctx := context.Background()
			watched, other := name+":watched", name+":other"
			defer p.Do(ctx, "DEL", watched, other)

			c, err := p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Do("WATCH", watched); err != nil {
				t.Fatal(err)
			}
			var rerr redis.Error
			if _, err := c.Do(end); !errors.As(err, &rerr) {
				t.Fatalf("%s outside MULTI: %v, want an error reply", end, err)
			}
			c.Close()

			c, err = p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := admin(t, addr).Do("SET", watched, "changed"); err != nil {
				t.Fatal(err)
			}
			c.Do("MULTI")
			c.Do("SET", other, "v")
			if reply, err := c.Do("EXEC"); err != nil || reply == nil {
				t.Errorf("the next caller's MULTI/EXEC = %v, %v: aborted by a WATCH the connection was given back with", reply, err)
			}
		})
	}
}

// panicArg is an argument whose RedisArg panics, as a value method called
// through a nil pointer does.
type panicArg struct{}

func (panicArg) RedisArg() any { panic("RedisArg panicked") }

// TestRedisPanicWritingCommand checks that a command whose argument
// panics while redigo writes it neither leaves its half-written command
// for the next caller, whose command the server would read as the rest of
// it, nor keeps the connection from the pool: Do gives it back, and the
// pool replaces it.
func TestRedisPanicWritingCommand(t *testing.T) {
	addr := testenv.Redis(t)
	tests := []struct {
		name string
		run  func(ctx context.Context, p *Pool, key string)
	}{
		{"Do", func(ctx context.Context, p *Pool, key string) {
			p.Do(ctx, "SET", key, panicArg{})
		}},
		{"With", func(ctx context.Context, p *Pool, key string) {
			p.With(ctx, func(ctx context.Context, c *Conn) error {
				_, err := c.Do("SET", key, panicArg{})
				return err
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := testName(t)
			p := newRedisPool(t, addr, name, actorpool.Config{MaxObjects: 1}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			func() {
				defer func() {
					if r := recover(); r == nil {
						t.Error("the panic did not reach the caller")
					}
				}()
				tt.run(ctx, p, name)
			}()
			if st := p.Stats(); st.InUse != 0 {
				t.Fatalf("in use after the panic: %d, want 0", st.InUse)
			}
			if reply, err := redis.String(p.Do(ctx, "PING")); err != nil || reply != "PONG" {
				t.Errorf("the next PING = %q, %v; want PONG", reply, err)
			}
			if st := p.Stats(); st.DestroyedBy.Invalid != 1 {
				t.Errorf("destroyed as invalid: %d, want 1", st.DestroyedBy.Invalid)
			}
		})
	}
}

// TestRedisWithConnAfterReturn checks that a With's Conn, the callback's
// or one acquired on the callback's context, refuses commands once With
// has given the connection back, as a Conn given back with Release does:
// by then the connection may be another caller's, and a command through
// the kept Conn would run inside that caller's MULTI.
func TestRedisWithConnAfterReturn(t *testing.T) {
	addr := testenv.Redis(t)
	for _, tc := range []struct {
		name string
		keep func(ctx context.Context, p *Pool, c *Conn) (*Conn, error)
	}{
		{"the callback's", func(ctx context.Context, p *Pool, c *Conn) (*Conn, error) { return c, nil }},
		{"acquired on its context", func(ctx context.Context, p *Pool, c *Conn) (*Conn, error) { return p.Acquire(ctx) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := testName(t)
			p := newRedisPool(t, addr, name, actorpool.Config{MaxObjects: 1}, nil)
			ctx := context.Background()
			key := name + ":k"
			defer p.Do(ctx, "DEL", key)

			var kept *Conn
			if err := p.With(ctx, func(ctx context.Context, c *Conn) (err error) {
				kept, err = tc.keep(ctx, p, c)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			other, err := p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if _, err := other.Do("MULTI"); err != nil {
				t.Fatal(err)
			}
			if _, err := kept.Do("SET", key, "from the kept Conn"); !errors.Is(err, ErrConnClosed) {
				t.Errorf("Do on a With's Conn after With returned: %v, want ErrConnClosed", err)
			}
			if err := kept.Err(); !errors.Is(err, ErrConnClosed) {
				t.Errorf("Err on a With's Conn after With returned: %v, want ErrConnClosed", err)
			}
			if ran, err := redis.Values(other.Do("EXEC")); err != nil || len(ran) != 0 {
				t.Errorf("the other caller's EXEC = %v, %v; want no commands: it sent none", ran, err)
			}
		})
	}
}
