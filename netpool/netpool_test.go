package netpool

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/testenv"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// newPool returns a pool on addr with cfg, closed when t ends.
func newPool(t *testing.T, cfg Config) *Pool {
	t.Helper()
	cfg.Pool.Logger = testLogger(t)
	p, err := NewWithConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CloseAtEnd(t, 10*time.Second, p.Close)
	return p
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no address", Config{Pool: actorpool.Config{MaxObjects: 1}}, "Config.Addr is empty"},
		{"negative MaxObjects", Config{Addr: "127.0.0.1:1", Pool: actorpool.Config{MaxObjects: -1}}, "MaxObjects"},
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
}

// dialPair returns both ends of a loopback TCP connection: the client end
// wrapped as the pool wraps it, and the server end.
func dialPair(t *testing.T) (*conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return newConn(client), server
}

// TestPeek checks what the look at an idle connection's receive queue
// finds, and that it takes nothing from it.
func TestPeek(t *testing.T) {
	tests := []struct {
		name   string
		server func(c net.Conn)
		want   error // nil, errUnexpectedData or io.EOF
	}{
		{"quiet", func(net.Conn) {}, nil},
		{"peer closed", func(c net.Conn) { c.Close() }, io.EOF},
		{"peer wrote", func(c net.Conn) { c.Write([]byte("surprise\n")) }, errUnexpectedData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, server := dialPair(t)
			tt.server(server)
			// What the server did reaches the client's socket after a
			// moment: poll, since a quiet socket stays quiet.
			var err error
			deadline := time.Now().Add(5 * time.Second)
			for {
				err = peek(client)
				if err != nil || tt.want == nil || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Millisecond)
			}
			if !errors.Is(err, tt.want) && !(tt.want == nil && err == nil) {
				t.Fatalf("peek: %v, want %v", err, tt.want)
			}
			if tt.want == errUnexpectedData {
				// The byte peeked at is still there.
				line, err := roundTripRead(client)
				if err != nil || line != "surprise" {
					t.Errorf("read after peek: %q, %v; want surprise", line, err)
				}
			}
		})
	}
	if err := peek(newConn(fakeConn{})); err != nil {
		t.Errorf("peek on a connection without a socket: %v, want nil", err)
	}
}

// fakeConn is a net.Conn with no socket under it.
type fakeConn struct{ net.Conn }

func roundTripRead(c net.Conn) (string, error) {
	var b strings.Builder
	var buf [1]byte
	for {
		if _, err := c.Read(buf[:]); err != nil {
			return b.String(), err
		}
		if buf[0] == '\n' {
			return b.String(), nil
		}
		b.WriteByte(buf[0])
	}
}

// TestBrokenNotReused checks that a connection whose Read or Write failed,
// or that its holder closed, is destroyed when given back;
// that a healthy one is reused, given back once however often Release is
// called; and that the next caller does not inherit a deadline.
func TestBrokenNotReused(t *testing.T) {
	srv := startLineServer(t, "127.0.0.1:0")
	tests := []struct {
		name    string
		use     func(c *Conn) error
		destroy bool
	}{
		{"round trip", func(c *Conn) error {
			_, err := roundTrip(c, "hello")
			return err
		}, false},
		{"read timed out", func(c *Conn) error {
			c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			_, err := roundTrip(c, "hang")
			return err
		}, true},
		{"deadline set, not reached", func(c *Conn) error {
			// A deadline already past would fail the next caller's read
			// if it were not cleared.
			c.SetDeadline(time.Now().Add(time.Hour))
			if _, err := roundTrip(c, "hello"); err != nil {
				return err
			}
			c.SetReadDeadline(time.Now().Add(-time.Second))
			return nil
		}, false},
		{"peer hung up mid-call", func(c *Conn) error {
			_, err := roundTrip(c, "bye")
			return err
		}, true},
		{"released twice", func(c *Conn) error {
			c.Release() // and again after
			return nil
		}, false},
		{"closed by the caller", func(c *Conn) error {
			if err := c.Close(); err != nil {
				return err
			}
			if !errors.Is(c.Err(), net.ErrClosed) {
				return errors.New("Err after Close: want net.ErrClosed")
			}
			return nil
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testenv.CheckGoroutines(t)
			p := newPool(t, Config{Addr: srv.addr, Pool: actorpool.Config{MaxObjects: 1}})
			ctx := context.Background()
			c, err := p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.use(c); err != nil && !tt.destroy {
				t.Fatal(err)
			}
			c.Release()
			if tt.destroy {
				testenv.Eventually(t, 10*time.Second, "the connection to be destroyed", func() bool { return p.Stats().DestroyedBy.Invalid == 1 })
			}
			c, err = p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Release()
			if got, err := roundTrip(c, "again"); err != nil || got != "AGAIN" {
				t.Errorf("next caller's round trip: %q, %v; want AGAIN", got, err)
			}
			wantCreated := int64(1)
			if tt.destroy {
				wantCreated = 2
			}
			if st := p.Stats(); st.Created != wantCreated {
				t.Errorf("created %d, want %d", st.Created, wantCreated)
			}
		})
	}
}

// TestTestFindsClosedConnections checks that the pool's periodic test
// retires idle connections the peer closed or wrote to, and replaces them.
func TestTestFindsClosedConnections(t *testing.T) {
	tests := []struct {
		name  string
		fault func(s *lineServer)
	}{
		{"peer closed", func(s *lineServer) { s.hangUp() }},
		{"peer wrote", func(s *lineServer) { s.say("bye\n") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testenv.CheckGoroutines(t)
			srv := startLineServer(t, "127.0.0.1:0")
			const n = 3
			p := newPool(t, Config{Addr: srv.addr, Pool: actorpool.Config{MaxObjects: n, MinIdle: n, ValidationInterval: 10 * time.Millisecond}})
			testenv.Eventually(t, 10*time.Second, "MinIdle connections, accepted and tested", func() bool {
				st := p.Stats()
				return st.Idle == n && st.Tests >= n && srv.held() == n
			})
			if st := p.Stats(); st.Destroyed != 0 {
				t.Fatalf("healthy idle connections destroyed: %+v", st.DestroyedBy)
			}
			tt.fault(srv)
			testenv.Eventually(t, 10*time.Second, "the test to retire every connection", func() bool {
				return p.Stats().DestroyedBy.TestFailed >= n
			})
			checkNoSlotLost(t, p)
		})
	}
}

// checkNoSlotLost checks that every slot of p can hold a connection that
// answers.
func checkNoSlotLost(t *testing.T, p *Pool) {
	t.Helper()
	testenv.CheckNoSlotLost(t, p.Stats, func(ctx context.Context) (func(), error) {
		c, err := p.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		if got, err := roundTrip(c, "ok"); err != nil || got != "OK" {
			c.Destroy()
			return nil, errors.Join(errors.New("round trip on a connection from the pool: "+got), err)
		}
		return c.Release, nil
	})
}

// TestPing checks that Ping runs on idle connections under the test's
// deadline, and that a failing or hanging ping retires the connection.
func TestPing(t *testing.T) {
	tests := []struct {
		name  string
		line  string // what the ping sends
		cause func(st actorpool.Stats) int64
	}{
		{"answers", "ping", nil},
		{"hangs", "hang", func(st actorpool.Stats) int64 { return st.DestroyedBy.TestFailed + st.DestroyedBy.TestTimeout }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testenv.CheckGoroutines(t)
			srv := startLineServer(t, "127.0.0.1:0")
			p := newPool(t, Config{
				Addr: srv.addr,
				Ping: func(ctx context.Context, c *Conn) error {
					got, err := roundTrip(c, tt.line)
					if err == nil && got != strings.ToUpper(tt.line) {
						err = errors.New("ping answered " + got)
					}
					return err
				},
				Pool: actorpool.Config{MaxObjects: 2, MinIdle: 2, ValidationInterval: 10 * time.Millisecond, TestTimeout: 50 * time.Millisecond},
			})
			if tt.cause == nil {
				testenv.Eventually(t, 10*time.Second, "pings", func() bool { return p.Stats().Tests >= 6 })
				if st := p.Stats(); st.Destroyed != 0 {
					t.Errorf("connections that answer the ping destroyed: %+v", st.DestroyedBy)
				}
			} else {
				testenv.Eventually(t, 10*time.Second, "pings to fail", func() bool { return tt.cause(p.Stats()) >= 2 })
			}
		})
	}
}

// TestDownAtStart starts a pool whose server is not listening, with callers
// waiting: they fail within their deadlines, and the pool recovers once
// the server listens.
func TestDownAtStart(t *testing.T) {
	testenv.CheckGoroutines(t)
	addr := testenv.FreeAddr(t)
	p := newPool(t, Config{Addr: addr, Pool: actorpool.Config{MaxObjects: 4, MinIdle: 2, CreateTimeout: time.Second}})
	load := testenv.StartLoad(t, 8, 100*time.Millisecond, func(ctx context.Context) error {
		return p.With(ctx, func(ctx context.Context, c *Conn) error {
			_, err := roundTrip(c, "x")
			return err
		})
	})
	load.WaitErrors(t, 10*time.Second)
	_, err := p.Acquire(context.Background())
	if !errors.Is(err, actorpool.ErrCreateFailed) || !strings.Contains(err.Error(), addr) {
		t.Errorf("Acquire while the server is down: %v, want a create error naming %s", err, addr)
	}
	startLineServer(t, addr)
	load.WaitAllSucceed(t, 30*time.Second)
	load.Stop()
	load.Check(t)
	checkNoSlotLost(t, p)
}

// TestServerRestart stops the server under a load of callers and starts it
// again on the same address: callers fail within their deadlines while it
// is down, and all succeed once it is back.
func TestServerRestart(t *testing.T) {
	testenv.CheckGoroutines(t)
	srv := startLineServer(t, "127.0.0.1:0")
	p := newPool(t, Config{Addr: srv.addr, Pool: actorpool.Config{MaxObjects: 4, CreateTimeout: time.Second}})
	load := testenv.StartLoad(t, 16, 200*time.Millisecond, func(ctx context.Context) error {
		c, err := p.Acquire(ctx)
		if err != nil {
			return err
		}
		defer c.Release()
		if dl, ok := ctx.Deadline(); ok {
			c.SetDeadline(dl)
		}
		_, err = roundTrip(c, "x")
		return err
	})
	load.WaitAllSucceed(t, 20*time.Second)
	load.Restart(t, srv.stop, srv.start, 10*time.Second, 30*time.Second)
	checkNoSlotLost(t, p)
}
