package testenv

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a testing.TB that records how a helper ended the test.
type recorder struct {
	testing.TB
	mu      sync.Mutex
	skipped string
	failed  string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.mu.Lock()
	r.skipped = format
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed = format
	r.mu.Unlock()
	runtime.Goexit()
}

// run calls f with a recorder on a goroutine of its own, since the
// recorder ends its goroutine as Skip and Fatal do.
func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

// TestServerVariables checks that an unset variable skips the test with a
// message that says how to run it, and that a variable naming a server
// that cannot be reached fails it.
func TestServerVariables(t *testing.T) {
	dead := FreeAddr(t)
	tests := []struct {
		name, variable, value string
		helper                func(testing.TB) string
		skip, fail            string
	}{
		{"Redis unset", RedisVar, "", Redis, "set %s=%s (a Redis server) or run bash .ci/run", ""},
		{"PostgreSQL unset", PostgresVar, "", Postgres, "set %s=%s (a PostgreSQL server) or run bash .ci/run", ""},
		{"Redis down", RedisVar, dead, Redis, "", "cannot be reached"},
		{"PostgreSQL down", PostgresVar, "postgres://u@" + dead + "/db", Postgres, "", "cannot be reached"},
		{"PostgreSQL not a URL", PostgresVar, "host=x", Postgres, "", "want a URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(tt.variable, tt.value)
			r := run(t, func(tb testing.TB) { tt.helper(tb) })
			if tt.skip != "" && !strings.Contains(r.skipped, tt.skip) {
				t.Errorf("skipped with %q, want %q", r.skipped, tt.skip)
			}
			if tt.fail != "" && !strings.Contains(r.failed, tt.fail) {
				t.Errorf("failed with %q, want a failure containing %q", r.failed, tt.fail)
			}
		})
	}
}

// proxiedEcho starts a server that sends back what each connection sends
// it, and a proxy to it, and returns the proxy and a connection through it.
// The connection, the proxy and the server close when t ends, in that
// order.
func proxiedEcho(t *testing.T) (*Proxy, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				io.Copy(c, c)
			})
		}
	})
	p := StartProxy(t, "127.0.0.1:0", ln.Addr().String())
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return p, c
}

// TestProxy checks that the proxy forwards, drops its connections on
// CutAll, and leaves no goroutine after Close.
func TestProxy(t *testing.T) {
	CheckGoroutines(t)
	p, c := proxiedEcho(t)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("hello\n"))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "hello\n" {
		t.Fatalf("through the proxy: %q, %v", line, err)
	}
	if n := p.Conns(); n != 1 {
		t.Errorf("Conns = %d, want 1", n)
	}
	p.CutAll()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("read after CutAll succeeded")
	}
	p.Close()
	if _, err := net.Dial("tcp", p.Addr()); err == nil {
		t.Error("dial after Close succeeded")
	}
}

// TestProxyStall checks that a stalled proxy holds what it reads, both
// ways, until Resume, and that Close ends its goroutines while stalled.
func TestProxyStall(t *testing.T) {
	CheckGoroutines(t)
	p, c := proxiedEcho(t)
	r := bufio.NewReader(c)
	p.Stall()
	c.Write([]byte("held\n"))
	// A stalled proxy forwards nothing: this read can only fail by
	// timing out, however slow the machine.
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if line, err := r.ReadString('\n'); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read through a stalled proxy: %q, %v; want a timeout", line, err)
	}
	p.Resume()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("read after Resume: %q, %v; want held", line, err)
	}
	p.Stall()
	c.Write([]byte("never\n"))
	p.Close()
	if _, err := r.ReadString('\n'); err == nil {
		t.Error("read after Close succeeded")
	}
}

// TestPrivatePostgres checks that a private cluster starts, answers,
// stops, starts again and freezes, on a port of its own.
func TestPrivatePostgres(t *testing.T) {
	s := PrivatePostgres(t)
	if s.Addr() == "127.0.0.1:5432" {
		t.Fatal("the private cluster took the shared server's port")
	}
	if !Reachable(s.Addr()) {
		t.Fatal("not reachable after PrivatePostgres")
	}
	s.Stop()
	if Reachable(s.Addr()) {
		t.Fatal("reachable after Stop")
	}
	s.Start()
	s.Crash()
	s.Start()
	s.Freeze()
	c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err == nil {
		// The kernel accepts; nobody answers the startup message.
		c.SetDeadline(time.Now().Add(200 * time.Millisecond))
		c.Write([]byte{0, 0, 0, 8, 4, 210, 22, 47}) // SSLRequest
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Error("a frozen cluster answered")
		}
		c.Close()
	}
	s.Thaw()
	if !Reachable(s.Addr()) {
		t.Fatal("not reachable after Thaw")
	}
}

// TestPrivateRedis checks that a private server starts, stops and starts
// again on a port of its own.
func TestPrivateRedis(t *testing.T) {
	s := PrivateRedis(t)
	if s.Addr() == "127.0.0.1:6379" {
		t.Fatal("the private server took the shared server's port")
	}
	s.Stop()
	if Reachable(s.Addr()) {
		t.Fatal("reachable after Stop")
	}
	s.Start()
	if !Reachable(s.Addr()) {
		t.Fatal("not reachable after Start")
	}
}
