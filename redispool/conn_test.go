package redispool

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/adapter"
	"github.com/gomodule/redigo/redis"
)

// okServer answers every command with +OK, except BAD, which gets an error
// reply, and HANG, which gets no reply at all.
func okServer(t *testing.T) *scriptedServer {
	return startScripted(t, func(cmd []string) []byte {
		switch strings.ToUpper(cmd[0]) {
		case "BAD":
			return []byte("-ERR unknown command 'BAD'\r\n")
		case "HANG":
			return nil
		}
		return []byte("+OK\r\n")
	})
}

func dialTest(t *testing.T, addr string) *conn {
	t.Helper()
	// The read timeout turns a command that is never interrupted into a
	// failure rather than a hang.
	c, err := newFactory(&Config{Addr: addr, DialOptions: []redis.DialOption{redis.DialReadTimeout(10 * time.Second)}}, adapter.NewClock(0)).Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.rc.Close() })
	return c
}

// TestValidate runs commands on a connection and checks whether the pool
// would hand it to the next caller.
func TestValidate(t *testing.T) {
	srv := okServer(t)
	tests := []struct {
		name string
		ops  []string // "do CMD", "send CMD", "flush", "receive"
		want string   // substring of the validate error; empty for none
	}{
		{"fresh", nil, ""},
		{"plain command", []string{"do GET"}, ""},
		{"error reply", []string{"do BAD"}, ""},
		{"MULTI left open", []string{"do MULTI", "do SET"}, "MULTI state"},
		{"lower-case multi", []string{"do multi"}, "MULTI state"},
		{"MULTI then EXEC", []string{"do MULTI", "do SET", "do EXEC"}, ""},
		{"MULTI then DISCARD", []string{"do MULTI", "do DISCARD"}, ""},
		{"WATCH left", []string{"do WATCH"}, "WATCH state"},
		{"WATCH then UNWATCH", []string{"do WATCH", "do UNWATCH"}, ""},
		{"WATCH, MULTI, EXEC", []string{"do WATCH", "do MULTI", "do EXEC"}, ""},
		{"WATCH, EXEC outside MULTI", []string{"do WATCH", "do EXEC"}, "WATCH state"},
		{"WATCH, DISCARD outside MULTI", []string{"do WATCH", "do DISCARD"}, "WATCH state"},
		{"WATCH and MULTI open", []string{"do WATCH", "do MULTI"}, "WATCH+MULTI state"},
		{"SUBSCRIBE", []string{"do SUBSCRIBE"}, "SUBSCRIBE state"},
		{"PSUBSCRIBE", []string{"do PSUBSCRIBE"}, "SUBSCRIBE state"},
		{"SSUBSCRIBE", []string{"do SSUBSCRIBE"}, "SUBSCRIBE state"},
		{"MONITOR", []string{"do MONITOR"}, "MONITOR state"},
		{"pipelined MULTI/EXEC", []string{"send MULTI", "send SET", "send EXEC", "do "}, ""},
		{"sent, never read", []string{"send GET"}, "1 replies unread"},
		{"two sent, one read", []string{"send GET", "send GET", "flush", "receive"}, "1 replies unread"},
		{"sent and read", []string{"send GET", "flush", "receive"}, ""},
		{"error reply received", []string{"send BAD", "flush", "receive"}, ""},
		{"Do reads what was sent", []string{"send GET", "send GET", "do PING"}, ""},
		{"Do with no command reads what was sent", []string{"send GET", "do "}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialTest(t, srv.addr())
			for _, op := range tt.ops {
				verb, cmd, _ := strings.Cut(op, " ")
				var err error
				switch verb {
				case "do":
					_, err = c.do(context.Background(), 0, cmd)
				case "send":
					err = c.send(cmd)
				case "flush":
					err = c.rc.Flush()
				case "receive":
					_, err = c.receive(context.Background(), 0)
				}
				var rerr redis.Error
				if err != nil && !errors.As(err, &rerr) {
					t.Fatalf("%s: %v", op, err)
				}
			}
			err := c.validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("validate: %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("validate: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestContextInterrupts checks that a command blocked on a server that does
// not answer ends when its context does, and that the connection is then
// refused by validate.
func TestContextInterrupts(t *testing.T) {
	srv := okServer(t)
	tests := []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		receive bool // block in Receive rather than Do
		want    error
		broken  bool
	}{
		{
			name: "deadline",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 20*time.Millisecond)
			},
			want: context.DeadlineExceeded, broken: true,
		},
		{
			name: "deadline in Receive",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 20*time.Millisecond)
			},
			want: context.DeadlineExceeded, broken: true, receive: true,
		},
		{
			name: "cancel",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(20*time.Millisecond, cancel)
				return ctx, cancel
			},
			want: context.Canceled, broken: true,
		},
		{
			// Nothing was sent, so the connection is still good.
			name: "ended before",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			want: context.Canceled, broken: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialTest(t, srv.addr())
			ctx, cancel := tt.ctx()
			defer cancel()
			var err error
			if tt.receive {
				if err := c.send("HANG"); err != nil {
					t.Fatal(err)
				}
				if err := c.rc.Flush(); err != nil {
					t.Fatal(err)
				}
				_, err = c.receive(ctx, 0)
			} else {
				_, err = c.do(ctx, 0, "HANG")
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			verr := c.validate()
			if tt.broken && !errors.Is(verr, errInterrupted) {
				t.Errorf("validate = %v, want errInterrupted", verr)
			}
			if !tt.broken {
				if verr != nil {
					t.Errorf("validate = %v, want nil", verr)
				}
				if _, err := c.do(context.Background(), 0, "PING"); err != nil {
					t.Errorf("PING after: %v", err)
				}
			}
		})
	}
}

// TestContextOutlivesCommand checks that a context which ends after its
// command has returned leaves the connection alone.
func TestContextOutlivesCommand(t *testing.T) {
	c := dialTest(t, okServer(t).addr())
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := c.do(ctx, 0, "GET"); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := c.validate(); err != nil {
		t.Errorf("validate after the command's context ended: %v", err)
	}
	if _, err := c.do(context.Background(), 0, "GET"); err != nil {
		t.Errorf("GET after: %v", err)
	}
}

// hookConn is a socket that calls onRead, once armed, when a Read has
// brought data.
type hookConn struct {
	net.Conn
	onRead atomic.Pointer[func()]
}

func (c *hookConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if f := c.onRead.Swap(nil); f != nil && n > 0 {
		(*f)()
	}
	return n, err
}

// TestContextEndsAsReplyComes checks that a connection whose command's
// context ended just as the reply came is not handed to the next caller.
// The command succeeds, but the interrupt that closes the socket has
// started on a goroutine of its own: on one P that goroutine runs only
// when the next caller's command blocks on the socket, which the
// interrupt then closes under it.
func TestContextEndsAsReplyComes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	srv := okServer(t)
	for _, receive := range []bool{false, true} {
		var sock atomic.Pointer[hookConn]
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			h := &hookConn{Conn: c}
			sock.Store(h)
			return h, nil
		}
		p, err := newPool(&Config{Addr: srv.addr(), Dial: dial, Pool: actorpool.Config{MaxObjects: 1}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		c, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		end := func() { cancel() }
		sock.Load().onRead.Store(&end) // the context ends as the reply comes
		if receive {
			c.Send("GET")
			c.Flush()
			_, err = c.ReceiveContext(ctx)
		} else {
			_, err = c.DoContext(ctx, "GET")
		}
		if err != nil {
			t.Fatalf("receive %v: command whose reply came: %v", receive, err)
		}
		c.Release()
		next, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := next.Do("GET"); err != nil {
			t.Errorf("receive %v: the next caller's command failed: %v", receive, err)
		}
		next.Release()
		if err := p.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}
}
