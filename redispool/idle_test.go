package redispool

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/sockpeek"
	"github.com/actorpool/actorpool/internal/testenv"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// TestPeek checks what the look at an idle connection's socket finds: a
// session the server ended, data it sent unasked, and, under TLS, an alert
// that ends the session or another record, which is left for the TLS
// layer; and that it takes nothing from the socket.
func TestPeek(t *testing.T) {
	tests := []struct {
		name   string
		server func(c net.Conn)
		data   bool  // the server sent data, which must still wait after peek
		want   error // nil, io.EOF, errUnexpectedData or errTLSAlert
	}{
		{"quiet", func(net.Conn) {}, false, nil},
		{"peer closed", func(c net.Conn) { c.Close() }, false, io.EOF},
		{"reply unasked", func(c net.Conn) { c.Write([]byte("+OK\r\n")) }, true, errUnexpectedData},
		{"error unasked, then closed", func(c net.Conn) { c.Write([]byte("-ERR bye\r\n")); c.Close() }, true, errUnexpectedData},
		{"TLS close_notify", func(c net.Conn) { c.Write([]byte{tlsAlert, 3, 3, 0, 2, 1, 0}) }, true, errTLSAlert},
		{"TLS session ticket", func(c net.Conn) { c.Write([]byte{tlsApplicationData, 3, 3, 0, 1, 0}) }, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, server := tcpPair(t)
			tt.server(server)
			if tt.data || tt.want != nil {
				// What the server did reaches the client's socket after
				// a moment.
				testenv.Eventually(t, 10*time.Second, "the server's doing to reach the socket", func() bool {
					_, waiting, err := sockpeek.Peek(client)
					return waiting || err != nil
				})
			}
			err := peek(&conn{nc: client})
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("peek: %v, want %v", err, tt.want)
			}
			if _, waiting, _ := sockpeek.Peek(client); waiting != tt.data {
				t.Errorf("data waiting after peek: %v, want %v: peek must take nothing", waiting, tt.data)
			}
		})
	}
}

// A socketLog dials TCP connections and keeps their sockets, so that a
// test can see what the pool's connections see.
type socketLog struct {
	mu    sync.Mutex
	socks []net.Conn
}

func (l *socketLog) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err == nil {
		l.mu.Lock()
		l.socks = append(l.socks, c)
		l.mu.Unlock()
	}
	return c, err
}

// sockets returns the sockets dialed so far.
func (l *socketLog) sockets() []net.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]net.Conn(nil), l.socks...)
}

// waitPeerClosed waits until n of socks show that the server closed them:
// the server's kill is done, and the pool's look at them would see it.
func waitPeerClosed(t *testing.T, socks []net.Conn, n int) {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, "the killed sessions' sockets to see their end", func() bool {
		closed := 0
		for _, s := range socks {
			if _, _, err := sockpeek.Peek(s); errors.Is(err, sockpeek.ErrPeerClosed) {
				closed++
			}
		}
		return closed == n
	})
}

// TestRedisIdleCheck checks, on a pool of one, that a connection taken
// again within a tick of the pool's clock is not looked at — its dead
// session reaches the caller, the price of no system call on most takes —
// and that one idle across a tick is: its dead session is found and
// replaced before the caller gets it.
func TestRedisIdleCheck(t *testing.T) {
	addr := testenv.Redis(t)
	testenv.CheckGoroutines(t)
	name := testName(t)
	var log socketLog
	p := newRedisPoolStill(t, addr, name, actorpool.Config{MaxObjects: 1}, log.dial)
	adm := redisAdmin{t, admin(t, addr)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kill := func() {
		t.Helper()
		if _, err := p.Do(ctx, "PING"); err != nil {
			t.Fatal(err)
		}
		adm.Kill(name)
		socks := log.sockets()
		waitPeerClosed(t, socks[len(socks)-1:], 1)
	}

	kill()
	if _, err := p.Do(ctx, "PING"); err == nil {
		t.Fatal("PING on a session killed within the tick succeeded: the pool looked at a connection it had just seen")
	}
	kill()
	p.clock.Tick()
	if _, err := p.Do(ctx, "PING"); err != nil {
		t.Fatalf("PING after the clock ticked: %v, want the dead session found and replaced", err)
	}
	// Destroys are counted when they end, on goroutines of the pool.
	testenv.Eventually(t, 10*time.Second, "2 connections destroyed as invalid", func() bool { return p.Stats().DestroyedBy.Invalid == 2 })
	if st := p.Stats(); st.DestroyedBy.Invalid != 2 || st.Created != 3 {
		t.Errorf("destroyed as invalid %d, created %d; want 2 and 3", st.DestroyedBy.Invalid, st.Created)
	}
}

// TestFaultKillIdle kills, with CLIENT KILL, every session of an idle pool
// or some of them, long before the pool would PING them: once the pool's
// clock has ticked, it finds the dead ones by looking at their sockets
// before handing them out, and no caller gets an error. The callers hold
// every connection at once, so that every idle connection is taken, and
// so looked at, whatever order the takes come in: exactly the killed ones
// are destroyed as invalid.
func TestFaultKillIdle(t *testing.T) {
	addr := testenv.Redis(t)
	const n = 4
	tests := []struct {
		name   string
		killed int
	}{
		{"every session", n},
		{"some sessions", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testenv.CheckGoroutines(t)
			name := testName(t)
			var log socketLog
			p := newRedisPoolStill(t, addr, name, actorpool.Config{MaxObjects: n, MinIdle: n}, log.dial)
			adm := redisAdmin{t, admin(t, addr)}
			testenv.Eventually(t, 20*time.Second, "MinIdle sessions", func() bool {
				return p.Stats().Idle == n && len(adm.Sessions(name)) == n
			})
			for _, id := range adm.Sessions(name)[:tt.killed] {
				if _, err := adm.adm.Do("CLIENT", "KILL", "ID", id); err != nil {
					t.Fatal(err)
				}
			}
			waitPeerClosed(t, log.sockets(), tt.killed)

			p.clock.Tick()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var held, wg sync.WaitGroup
			held.Add(n)
			for range n {
				wg.Go(func() {
					c, err := p.Acquire(ctx)
					held.Done()
					if err != nil {
						t.Errorf("Acquire after %d of %d idle sessions were killed: %v", tt.killed, n, err)
						return
					}
					defer c.Release()
					held.Wait()
					if _, err := c.DoContext(ctx, "PING"); err != nil {
						t.Errorf("PING after %d of %d idle sessions were killed: %v", tt.killed, n, err)
					}
				})
			}
			wg.Wait()
			for range 2 * n {
				if _, err := p.Do(ctx, "PING"); err != nil {
					t.Errorf("PING after the dead connections were replaced: %v", err)
				}
			}
			testenv.Eventually(t, 10*time.Second, "the killed connections to be destroyed", func() bool {
				return p.Stats().DestroyedBy.Invalid >= int64(tt.killed)
			})
			if st := p.Stats(); st.DestroyedBy.Invalid != int64(tt.killed) || st.Created != int64(n+tt.killed) {
				t.Errorf("destroyed as invalid %d, created %d; want %d and %d", st.DestroyedBy.Invalid, st.Created, tt.killed, n+tt.killed)
			}
			faults.CheckNoSlotLost(t, p)
		})
	}
}
