package redispool

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/gomodule/redigo/redis"
)

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no address", Config{}, "Config.Addr is empty"},
		{"bad network", Config{Addr: "x:1", Network: "udp"}, `Config.Network is "udp"`},
		{"bad pool", Config{Addr: "x:1", Pool: actorpool.Config{MaxObjects: -1}}, "MaxObjects"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewWithConfig(&tt.cfg)
			if err == nil {
				p.Close(context.Background())
				t.Fatalf("New succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v, want an error containing %q", err, tt.want)
			}
		})
	}
	var cerr *actorpool.ConfigError
	if _, err := NewWithConfig(&Config{Addr: "x:1", Pool: actorpool.Config{MaxObjects: -1}}); !errors.As(err, &cerr) || cerr.Field != "MaxObjects" {
		t.Errorf("New with MaxObjects -1: %v, want an *actorpool.ConfigError for MaxObjects", err)
	}
}

func TestConfigDefaults(t *testing.T) {
	p, err := New("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	cfg := p.Config()
	if cfg.Pool.MaxObjects != DefaultMaxConns() || cfg.Pool.Name != "redispool" || cfg.Addr != "127.0.0.1:1" {
		t.Errorf("MaxObjects, Name, Addr = %d, %q, %q; want %d, %q, 127.0.0.1:1", cfg.Pool.MaxObjects, cfg.Pool.Name, cfg.Addr, DefaultMaxConns(), "redispool")
	}
	cfg.Pool.MaxObjects = 1
	if p.Config().Pool.MaxObjects != DefaultMaxConns() {
		t.Error("changing what Config returned changed the pool's")
	}
}

// misbehaving answers PING with PONG, GARBAGE with a reply that is not
// RESP, HANGUP by closing the connection, HANG never, BAD with an error
// reply, and anything else with +OK.
func misbehaving(t *testing.T) *scriptedServer {
	return startScripted(t, func(cmd []string) []byte {
		switch strings.ToUpper(cmd[0]) {
		case "PING":
			return []byte("+PONG\r\n")
		case "GARBAGE":
			return []byte("&what is this\r\n")
		case "HANGUP":
			return hangUp
		case "HANG":
			return nil
		case "BAD":
			return []byte("-ERR unknown command 'BAD'\r\n")
		}
		return []byte("+OK\r\n")
	})
}

// TestBrokenConnectionsAreDestroyed checks that a connection that saw a
// protocol or network error, was interrupted, or was given back dirty is
// destroyed, not handed to the next caller, and that an error reply keeps
// it.
func TestBrokenConnectionsAreDestroyed(t *testing.T) {
	srv := misbehaving(t)
	short := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 20*time.Millisecond)
	}
	tests := []struct {
		name    string
		use     func(p *Pool) error
		destroy bool
	}{
		{"protocol error", func(p *Pool) error { _, err := p.Do(context.Background(), "GARBAGE"); return err }, true},
		{"server hung up", func(p *Pool) error { _, err := p.Do(context.Background(), "HANGUP"); return err }, true},
		{"context ended", func(p *Pool) error {
			ctx, cancel := short()
			defer cancel()
			_, err := p.Do(ctx, "HANG")
			return err
		}, true},
		{"MULTI left open", func(p *Pool) error {
			c, err := p.Acquire(context.Background())
			if err != nil {
				return err
			}
			defer c.Close()
			_, err = c.Do("MULTI")
			return err
		}, true},
		{"replies left unread", func(p *Pool) error {
			c, err := p.Acquire(context.Background())
			if err != nil {
				return err
			}
			defer c.Close()
			return c.Send("GET", "k")
		}, true},
		{"destroyed", func(p *Pool) error {
			c, err := p.Acquire(context.Background())
			if err != nil {
				return err
			}
			c.Destroy()
			return nil
		}, true},
		{"error reply", func(p *Pool) error { _, err := p.Do(context.Background(), "BAD"); return err }, false},
		{"clean", func(p *Pool) error { _, err := p.Do(context.Background(), "SET", "k", "v"); return err }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testenv.CheckGoroutines(t)
			p, err := NewWithConfig(&Config{Addr: srv.addr(), Pool: actorpool.Config{MaxObjects: 1}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			// Connected first, so that on a busy machine the short
			// deadline of "context ended" is not spent on the connect.
			if _, err := p.Do(context.Background(), "PING"); err != nil {
				t.Fatal(err)
			}
			tt.use(p)
			if tt.destroy {
				testenv.Eventually(t, 10*time.Second, "the connection to be destroyed", func() bool { return p.Stats().Destroyed == 1 })
			}
			// The pool holds one connection: the next command gets a
			// working one, new if the first was destroyed.
			reply, err := redis.String(p.Do(context.Background(), "PING"))
			if err != nil || reply != "PONG" {
				t.Fatalf("PING after: %q, %v", reply, err)
			}
			st := p.Stats()
			wantCreated := int64(1)
			if tt.destroy {
				wantCreated = 2
			}
			if st.Created != wantCreated || st.Destroyed != wantCreated-1 {
				t.Errorf("created %d, destroyed %d; want %d, %d", st.Created, st.Destroyed, wantCreated, wantCreated-1)
			}
			if err := p.Close(context.Background()); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestWithNests checks that Do, Acquire and With on a With callback's
// context use the callback's connection: on a pool of one they would wait
// forever otherwise.
func TestWithNests(t *testing.T) {
	srv := misbehaving(t)
	p, err := NewWithConfig(&Config{Addr: srv.addr(), Pool: actorpool.Config{MaxObjects: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = p.With(ctx, func(ctx context.Context, outer *Conn) error {
		if _, err := p.Do(ctx, "PING"); err != nil {
			return err
		}
		inner, err := p.Acquire(ctx)
		if err != nil {
			return err
		}
		if inner.c != outer.c {
			t.Error("Acquire inside With returned another connection")
		}
		inner.Close()
		if err := outer.Close(); err != nil {
			t.Errorf("Close on With's connection: %v", err)
		}
		return p.With(ctx, func(ctx context.Context, c *Conn) error {
			_, err := c.Do("PING")
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.Created != 1 || st.InUse != 0 || st.Idle != 1 {
		t.Errorf("after With: created %d, in use %d, idle %d; want 1, 0, 1", st.Created, st.InUse, st.Idle)
	}
}

func TestConnAfterClose(t *testing.T) {
	srv := misbehaving(t)
	p, err := NewWithConfig(&Config{Addr: srv.addr(), Pool: actorpool.Config{MaxObjects: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	c, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); !errors.Is(err, ErrConnClosed) {
		t.Errorf("second Close: %v, want ErrConnClosed", err)
	}
	if _, err := c.Do("PING"); !errors.Is(err, ErrConnClosed) {
		t.Errorf("Do after Close: %v, want ErrConnClosed", err)
	}
	if err := c.Send("PING"); !errors.Is(err, ErrConnClosed) {
		t.Errorf("Send after Close: %v, want ErrConnClosed", err)
	}
	if err := c.Err(); !errors.Is(err, ErrConnClosed) {
		t.Errorf("Err after Close: %v, want ErrConnClosed", err)
	}
}

// TestCreateFailure checks that a server that refuses connections fails
// the take with a CreateError that names the address.
func TestCreateFailure(t *testing.T) {
	testenv.CheckGoroutines(t)
	addr := testenv.FreeAddr(t)
	p, err := NewWithConfig(&Config{Addr: addr, Pool: actorpool.Config{MaxObjects: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = p.Do(ctx, "PING")
	if !errors.Is(err, actorpool.ErrCreateFailed) || !strings.Contains(err.Error(), addr) {
		t.Errorf("Do on a refusing server: %v, want a create error naming %s", err, addr)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestZeroTimeoutMeansNone checks that DoWithTimeout and
// ReceiveWithTimeout with a timeout of zero wait for the reply however
// long it takes, as redigo's connections and pooled connections do: a
// zero timeout overrides the read timeout the connection was dialed with,
// for a BLPOP that blocks until something comes.
func TestZeroTimeoutMeansNone(t *testing.T) {
	for _, receive := range []bool{false, true} {
		name := map[bool]string{false: "DoWithTimeout", true: "ReceiveWithTimeout"}[receive]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var servers sync.WaitGroup
				defer servers.Wait()
				dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
					client, server := net.Pipe()
					servers.Go(func() {
						defer server.Close()
						r := bufio.NewReader(server)
						for {
							if _, err := readCommand(r); err != nil {
								return
							}
							time.Sleep(time.Minute) // BLPOP waits for a push
							if _, err := server.Write([]byte("+OK\r\n")); err != nil {
								return
							}
						}
					})
					return client, nil
				}
				p, err := newPool(&Config{
					Addr: "redis.test:6379", Dial: dial,
					DialOptions: []redis.DialOption{redis.DialReadTimeout(time.Second)},
					Pool:        actorpool.Config{MaxObjects: 1},
				}, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close(context.Background())
				c, err := p.Acquire(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Release()
				if receive {
					c.Send("BLPOP", "q", 0)
					c.Flush()
					_, err = c.ReceiveWithTimeout(0)
				} else {
					_, err = c.DoWithTimeout(0, "BLPOP", "q", 0)
				}
				if err != nil {
					t.Errorf("a command with no read timeout failed: %v", err)
				}
			})
		})
	}
}
