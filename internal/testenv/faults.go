package testenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
)

// A FaultSuite is the fault tests that every adapter over a server passes —
// the server restarting under load, down for a while, down when the pool
// starts; its sessions ended from the server's side, idle or in use; calls
// that the server holds past their deadline — with what differs from one
// adapter to the next: how to make a pool of type P, whose connections are
// of type C, how to make a call, and how to look at and end the sessions on
// the server. Its fields are all required, but AfterBlock.
//
// A test that stops the server stops a private one (Private); the others
// use the shared server (Shared), and end only the sessions of their own
// pool.
type FaultSuite[P FaultPool[C], C FaultConn] struct {
	// Timeout is each call's deadline under load, and the pool's
	// CreateTimeout.
	Timeout time.Duration

	// Shared returns the address of the shared server, as Open takes it: a
	// PostgreSQL URL, a Redis host:port. It skips t when there is none.
	Shared func(t testing.TB) string
	// Private starts a private server that the test may stop and start,
	// removed when t ends, and returns it and its address.
	Private func(t testing.TB) (srv OutageServer, addr string)
	// HostPort returns the host:port of the server at addr, and Move addr
	// changed to name the server at hostport instead.
	HostPort func(t testing.TB, addr string) string
	Move     func(t testing.TB, addr, hostport string) string
	// Open returns a pool of the server at addr whose sessions carry name,
	// so that an Admin finds them, with the adapter's defaults and its log
	// in t's output, then set by tune; dial, if not nil, opens its network
	// connections. The pool is closed when t ends.
	Open func(t testing.TB, addr, name string, tune func(*actorpool.Config), dial DialFunc) P
	// Admin returns what looks at and ends the sessions of the server at
	// addr, over a connection of its own closed when t ends.
	Admin func(t testing.TB, addr string) FaultAdmin

	// Call makes a round trip to the server on a connection of p, and Ping
	// on c: SELECT 1, PING. Block makes a call that the server holds for
	// seconds, past ctx's end: pg_sleep, BLPOP on an empty list.
	Call  func(p P, ctx context.Context) error
	Ping  func(c C, ctx context.Context) error
	Block func(p P, ctx context.Context) error

	// AfterBlock, if set, checks what the server holds once the calls of
	// Block have been interrupted, on p's server at addr.
	AfterBlock func(t *testing.T, p P, addr, name string)

	// ConnectFailed, if set, reports whether err is the error of a call
	// whose connect failed, for an adapter that returns the connect's own
	// error rather than the actorpool.CreateError that wraps it, as
	// pgpool does, as pgxpool does. Unset, the suite looks for the
	// CreateError.
	ConnectFailed func(err error) bool
}

// A FaultPool is an adapter's Pool, whose Acquire lends a C.
type FaultPool[C any] interface {
	Stats() actorpool.Stats
	Acquire(ctx context.Context) (C, error)
}

// A FaultConn is an adapter's Conn.
type FaultConn interface{ Release() }

// A FaultAdmin looks at and ends a server's sessions. A failure fails the
// test that made it.
type FaultAdmin interface {
	// Sessions returns the server's IDs of the sessions named name, sorted.
	Sessions(name string) []string
	// Kill ends the sessions named name, from the server's side.
	Kill(name string)
}

// Run runs the suite, each test as a subtest of t.
func (s FaultSuite[P, C]) Run(t *testing.T) {
	t.Run("Restart", s.restart)
	t.Run("OutageRecovery", s.outageRecovery)
	t.Run("KillIdle", s.killIdle)
	t.Run("KillInUse", s.killInUse)
	t.Run("DownAtStart", s.downAtStart)
	t.Run("SlowCall", s.slowCall)
}

var faultSeq atomic.Int64

// faultName returns a name for a pool's sessions that no other test run
// uses.
func faultName() string {
	return fmt.Sprintf("actorpool_fault_%d_%d", time.Now().UnixNano(), faultSeq.Add(1))
}

// CheckNoSlotLost checks that every slot of p can still hold a working
// connection.
func (s FaultSuite[P, C]) CheckNoSlotLost(t testing.TB, p P) {
	t.Helper()
	CheckNoSlotLost(t, p.Stats, func(ctx context.Context) (func(), error) {
		c, err := p.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		if err := s.Ping(c, ctx); err != nil {
			c.Release()
			return nil, err
		}
		return c.Release, nil
	})
}

// restart stops the server in the middle of a load of concurrent callers
// and starts it again: callers fail, within their deadlines, while it is
// down, and all succeed again once it is back.
func (s FaultSuite[P, C]) restart(t *testing.T) {
	CheckGoroutines(t)
	srv, addr := s.Private(t)
	p := s.Open(t, addr, faultName(), func(c *actorpool.Config) { c.MaxObjects, c.CreateTimeout = 8, s.Timeout }, nil)
	load := StartLoad(t, 32, s.Timeout, func(ctx context.Context) error { return s.Call(p, ctx) })
	load.WaitAllSucceed(t, 30*time.Second)
	load.Restart(t, srv.Stop, srv.Start, 20*time.Second, 60*time.Second)
	s.CheckNoSlotLost(t, p)
}

// outageRecovery stops the server for 2s under 64 clients with 1s
// deadlines on a pool of 16, and starts it again: the pool must try about
// ten connections a second meanwhile, not hammer the server, and serve the
// calls that were waiting when it came back. docs/benchmarks.md reports
// its figures, with the peers'.
func (s FaultSuite[P, C]) outageRecovery(t *testing.T) {
	CheckGoroutines(t)
	srv, addr := s.Private(t)
	o := Outage{Clients: 64, Size: 16, Deadline: time.Second, Down: 2 * time.Second}
	r := MeasureOutage(t, srv, o, func(dial DialFunc) (func(context.Context) error, func()) {
		p := s.Open(t, addr, faultName(), func(c *actorpool.Config) { c.MaxObjects, c.Logger = o.Size, slog.New(slog.DiscardHandler) }, dial)
		return func(ctx context.Context) error { return s.Call(p, ctx) }, nil
	})
	t.Log(r)
	r.Check(t)
}

// killIdle ends the pool's idle sessions from the server's side: the
// pool's tests find them and replace them before a caller takes them.
func (s FaultSuite[P, C]) killIdle(t *testing.T) {
	addr := s.Shared(t)
	CheckGoroutines(t)
	name := faultName()
	const n = 4
	p := s.Open(t, addr, name, func(c *actorpool.Config) { c.MaxObjects, c.MinIdle, c.ValidationInterval = n, n, 20*time.Millisecond }, nil)
	adm := s.Admin(t, addr)
	Eventually(t, 20*time.Second, "MinIdle sessions", func() bool { return len(adm.Sessions(name)) == n })
	old := adm.Sessions(name)
	adm.Kill(name)
	Eventually(t, 30*time.Second, "the ended sessions to fail their test and be replaced", func() bool {
		return p.Stats().DestroyedBy.TestFailed >= n && len(adm.Sessions(name)) == n
	})
	if now := adm.Sessions(name); slices.ContainsFunc(now, func(id string) bool { return slices.Contains(old, id) }) {
		t.Errorf("ended sessions %v still listed: %v", old, now)
	}
	// Every connection works, n at once, with no error for any caller.
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := p.Acquire(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Release()
			time.Sleep(10 * time.Millisecond) // hold it, so that n are out at once
			if err := s.Ping(c, ctx); err != nil {
				t.Errorf("a call on a connection the pool handed out after the sessions ended: %v", err)
			}
		})
	}
	wg.Wait()
	s.CheckNoSlotLost(t, p)
}

// killInUse ends a session that the pool has not tested: the caller who
// uses it gets the error, and the pool destroys it rather than handing it
// out again.
func (s FaultSuite[P, C]) killInUse(t *testing.T) {
	addr := s.Shared(t)
	name := faultName()
	p := s.Open(t, addr, name, func(c *actorpool.Config) { c.MaxObjects = 1 }, nil)
	ctx := context.Background()
	if err := s.Call(p, ctx); err != nil {
		t.Fatal(err)
	}
	adm := s.Admin(t, addr)
	adm.Kill(name)
	Eventually(t, 20*time.Second, "the session to end", func() bool { return len(adm.Sessions(name)) == 0 })
	if err := s.Call(p, ctx); err == nil {
		t.Fatal("a call on an ended session succeeded")
	}
	Eventually(t, 10*time.Second, "the dead connection to be destroyed", func() bool {
		return p.Stats().DestroyedBy.Invalid == 1
	})
	if err := s.Call(p, ctx); err != nil {
		t.Errorf("a call after the dead connection was replaced: %v", err)
	}
	s.CheckNoSlotLost(t, p)
}

// downAtStart starts a pool whose server is down, with callers waiting:
// they fail within their deadlines, with the connect error, and the pool
// recovers once the server is up. The server is a proxy to the shared
// server on an address nothing listens on, so the shared server keeps
// running.
func (s FaultSuite[P, C]) downAtStart(t *testing.T) {
	shared := s.Shared(t)
	CheckGoroutines(t)
	addr := FreeAddr(t)
	p := s.Open(t, s.Move(t, shared, addr), faultName(), func(c *actorpool.Config) { c.MaxObjects, c.MinIdle, c.CreateTimeout = 4, 2, s.Timeout }, nil)
	const deadline = 300 * time.Millisecond
	load := StartLoad(t, 8, deadline, func(ctx context.Context) error { return s.Call(p, ctx) })
	load.WaitErrors(t, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	err := s.Call(p, ctx)
	cancel()
	connectFailed := s.ConnectFailed
	if connectFailed == nil {
		connectFailed = func(err error) bool { return errors.Is(err, actorpool.ErrCreateFailed) }
	}
	if !connectFailed(err) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call while the server is down: %v, want a connect error or a timeout", err)
	}
	if st := p.Stats(); st.CreateErrors == 0 {
		t.Errorf("no create errors while the server is down: %+v", st)
	}

	StartProxy(t, addr, s.HostPort(t, shared))
	load.WaitAllSucceed(t, 30*time.Second)
	load.Stop()
	load.Check(t)
	Eventually(t, 10*time.Second, "MinIdle connections", func() bool { return p.Stats().Idle >= 2 })
	s.CheckNoSlotLost(t, p)
}

// slowCall makes calls that the server holds (Block) from more callers
// than the pool has connections, with contexts that end first: every
// caller gets an error within its deadline, the interrupted connections
// are destroyed and replaced, and no slot is lost.
func (s FaultSuite[P, C]) slowCall(t *testing.T) {
	addr := s.Shared(t)
	CheckGoroutines(t)
	name := faultName()
	const n = 4
	p := s.Open(t, addr, name, func(c *actorpool.Config) { c.MaxObjects, c.MinIdle = n, n }, nil)
	// Connected first, so that on a busy machine no caller spends its
	// deadline waiting for a connect: each connection makes a call.
	Eventually(t, 20*time.Second, "MinIdle connections", func() bool { return p.Stats().Idle == n })
	const callers, deadline = 3 * n, 200 * time.Millisecond
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			start := time.Now()
			err := s.Block(p, ctx)
			if late := time.Since(start) - deadline; late > Grace {
				t.Errorf("a held call returned %v after its deadline", late)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a held call past its deadline: %v, want context.DeadlineExceeded", err)
		}
	}
	// The first n callers hold every connection in a call the server holds
	// past their deadline, so each of the n is interrupted and must be
	// destroyed. The other callers time out waiting, or get a replacement
	// just as their deadline passes and give it back unused, or
	// interrupted: at most callers-timeouts connections are destroyed.
	st := p.Stats()
	gotOne := callers - st.TimedOutAcquires - st.CanceledAcquires
	if gotOne < n {
		t.Errorf("%d calls got a connection, want at least %d: every connection made one", gotOne, n)
	}
	Eventually(t, 10*time.Second, "the interrupted connections to be destroyed", func() bool {
		return p.Stats().DestroyedBy.Invalid >= n
	})
	if d := p.Stats().DestroyedBy.Invalid; d > gotOne {
		t.Errorf("%d connections destroyed as invalid, more than the %d calls that got one", d, gotOne)
	}
	if s.AfterBlock != nil {
		s.AfterBlock(t, p, addr, name)
	}
	s.CheckNoSlotLost(t, p)
}
