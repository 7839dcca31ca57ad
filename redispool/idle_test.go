package redispool

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/sockpeek"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/gomodule/redigo/redis"
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
	// Only Linux shows the end of the stream behind a record.
	var tls13Closed error
	if runtime.GOOS == "linux" {
		tls13Closed = io.EOF
	}
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
		{"TLS 1.3 close_notify, then closed", func(c net.Conn) {
			c.Write(append([]byte{tlsApplicationData, 3, 3, 0, 19}, make([]byte, 19)...))
			c.Close()
		}, true, tls13Closed},
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
					// Behind data, the end comes a moment later too.
					return err != nil || waiting && (tt.want != io.EOF || sockpeek.Closed(client))
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

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 and its
// key to dir, and returns their files' paths.
func writeSelfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestFaultKillIdleTLS checks, on a private server over TLS 1.3, that the
// look at an idle connection finds a session the server ended: its
// goodbye (close_notify) is a record of the same type as the session
// tickets it sends after the handshake, and waits before the end of the
// stream. A fresh connection, whose tickets wait unread, is kept.
func TestFaultKillIdleTLS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the end of the stream behind a TLS record is seen on Linux only")
	}
	certFile, keyFile := writeSelfSigned(t, t.TempDir())
	tlsAddr := testenv.FreeAddr(t)
	_, tlsPort, _ := net.SplitHostPort(tlsAddr)
	srv := testenv.PrivateRedis(t, "--tls-port", tlsPort, "--tls-cert-file", certFile, "--tls-key-file", keyFile,
		"--tls-ca-cert-file", certFile, "--tls-auth-clients", "no")
	testenv.Eventually(t, 20*time.Second, "the server's TLS port", func() bool { return testenv.Reachable(tlsAddr) })

	var log socketLog
	p, err := newPool(&Config{
		Addr: "rediss://" + tlsAddr, Dial: log.dial,
		DialOptions: []redis.DialOption{redis.DialTLSConfig(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})},
		Pool:        actorpool.Config{MaxObjects: 1, Logger: testLogger(t)},
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CloseAtEnd(t, 10*time.Second, p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	sock := log.sockets()[0]
	testenv.Eventually(t, 10*time.Second, "the session tickets to wait on the fresh connection", func() bool {
		_, waiting, _ := sockpeek.Peek(sock)
		return waiting
	})
	p.clock.Tick()
	if reply, err := redis.String(p.Do(ctx, "PING")); err != nil || reply != "PONG" {
		t.Fatalf("PING on a fresh connection = %q, %v; want PONG", reply, err)
	}
	if st := p.Stats(); st.Created != 1 {
		t.Errorf("created %d, want 1: a fresh connection whose session tickets wait was replaced", st.Created)
	}

	if n, err := redis.Int(admin(t, srv.Addr()).Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL = %d, %v; want 1 session killed", n, err)
	}
	testenv.Eventually(t, 10*time.Second, "the killed session's socket to see its end", func() bool { return sockpeek.Closed(sock) })
	p.clock.Tick()
	if reply, err := redis.String(p.Do(ctx, "PING")); err != nil || reply != "PONG" {
		t.Errorf("PING after the idle session was killed = %q, %v; want PONG on a new connection", reply, err)
	}
	if st := p.Stats(); st.Created != 2 || st.DestroyedBy.Invalid != 1 {
		t.Errorf("created %d, destroyed as invalid %d; want 2 and 1", st.Created, st.DestroyedBy.Invalid)
	}
}
