package redispool

import (
	"context"
	"errors"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/adapter"
	"github.com/actorpool/actorpool/internal/testenv"
)

// TestDestroyDuringTest checks the factory's side of actorpool's contract
// on a Test that outlives TestTimeout: the pool destroys the connection
// while Test still runs, and Destroy must then close only the socket,
// which ends Test's wait for its PONG, and leave closing the connection
// itself (redigo's Close, a TLS goodbye) to Test's goroutine. Test here
// ignores its deadline (it has none), as a Test stuck past TestTimeout
// does; and the pool may destroy a connection before its Test has even
// begun, which must then do no I/O.
func TestDestroyDuringTest(t *testing.T) {
	tests := []struct {
		name   string
		before bool // Destroy before Test begins, rather than while it waits
	}{
		{"while Test waits for its reply", false},
		{"before Test begins", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testenv.CheckGoroutines(t)
			srv := startScripted(t, func([]string) []byte { return nil }) // never answers
			var d testenv.FragileDialer
			f := newFactory(&Config{Addr: srv.addr(), Dial: d.Dial}, adapter.NewClock(0))
			c, err := f.Create(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			fc := d.Conns()[0]
			if tt.before {
				f.Destroy(c)
			}
			tested := make(chan error, 1)
			go func() { tested <- f.Test(context.Background(), c) }()
			if !tt.before {
				testenv.Eventually(t, 10*time.Second, "the PING to wait for its reply", fc.Reading)
				f.Destroy(c)
			}
			select {
			case err := <-tested:
				if err == nil {
					t.Error("Test of a destroyed connection succeeded")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Test still blocked 10 s after Destroy: Destroy must close the socket under it")
			}
			fc.Check(t)
		})
	}
}

// TestTestStalledPastTimeout stalls the server, through a proxy, under
// idle connections that the pool tests: each PING waits past TestTimeout,
// the pool destroys the connection while Test still runs, and no
// connection is closed beside the PING's read (by the deadline's
// interrupt or by Destroy) — under -race too. Once the server answers
// again, every slot works.
func TestTestStalledPastTimeout(t *testing.T) {
	addr := testenv.Redis(t)
	testenv.CheckGoroutines(t)
	proxy := testenv.StartProxy(t, "127.0.0.1:0", addr)
	var d testenv.FragileDialer
	const n = 2
	p := newRedisPool(t, proxy.Addr(), testName(t), actorpool.Config{
		MaxObjects: n, MinIdle: n, ValidationInterval: 10 * time.Millisecond, TestTimeout: 50 * time.Millisecond,
	}, d.Dial)
	testenv.Eventually(t, 20*time.Second, "MinIdle connections", func() bool { return p.Stats().Idle == n })
	proxy.Stall()
	testenv.Eventually(t, 20*time.Second, "the stalled tests to time out", func() bool { return p.Stats().DestroyedBy.TestTimeout >= n })
	proxy.Resume()
	faults.CheckNoSlotLost(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	d.Check(t)
}

// TestCreateTimeoutBoundsTLSHandshake checks that Create ends when its
// context does while the TLS handshake waits on a server that never
// answers: Config.Pool.CreateTimeout bounds the whole connect, and a
// create that outlives it holds a place in the pool until it returns.
func TestCreateTimeoutBoundsTLSHandshake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var servers []net.Conn
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			client, server := net.Pipe() // a server that reads nothing
			servers = append(servers, server)
			return client, nil
		}
		f := newFactory(&Config{Addr: "rediss://redis.test:6379", Dial: dial}, adapter.NewClock(0))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		c, err := f.Create(ctx)
		if err == nil {
			c.rc.Close()
			t.Fatal("Create succeeded without a handshake")
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Create returned after %v, past its context's deadline of 1s: %v", d, err)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Create: %v, want an error wrapping context.DeadlineExceeded", err)
		}
		for _, s := range servers {
			s.Close()
		}
	})
}
