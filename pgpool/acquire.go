package pgpool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/puddle/v2"
)

// Taking a connection and giving it back, with pgxpool's hooks around the
// actorpool lease: the acquire tracer, ShouldPing with its ping,
// PrepareConn (take); the release tracer and AfterRelease (give). Every way
// of taking a connection — Acquire, the one-call methods, With — goes
// through take and give.

// Acquire takes a connection from the pool, waiting until one is free or
// ctx ends, for several statements on one connection. The caller must give
// it back with Conn.Release.
//
// It fails with ctx's error when ctx ends first, with the connect's error
// when connecting for it failed, with ErrClosedPool once the pool is
// closed, and with actorpool.ErrPoolExhausted when Pool.MaxQueueSize
// takers already wait: the errors pgxpool returns, as they are, and one
// of its own.
//
// On the context of a With callback, it returns that With's connection,
// whose Release gives nothing back.
func (p *Pool) Acquire(ctx context.Context) (*Conn, error) {
	l, err := p.take(ctx)
	if err != nil {
		return nil, err
	}
	return &Conn{p: p, lease: l, c: l.Value()}, nil
}

// AcquireFunc takes a connection, calls f with it, and gives it back, even
// when f panics. ctx bounds the take only.
func (p *Pool) AcquireFunc(ctx context.Context, f func(*Conn) error) error {
	c, err := p.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return f(c)
}

// AcquireAllIdle takes every connection idle now, without waiting or
// connecting, each passed by PrepareConn (a connection it refuses, or that
// fails it, is closed), for health checks and keep-alives of one's own.
// Each must be given back with Release.
func (p *Pool) AcquireAllIdle(ctx context.Context) []*Conn {
	var conns []*Conn
	for {
		l, ok := p.pool.AcquireIdle()
		if !ok {
			return conns
		}
		p.idleSweeps.Add(1)
		if p.prepare != nil {
			if ok, err := p.prepare(ctx, l.Value().Conn); !ok || err != nil {
				l.Destroy()
				continue
			}
		}
		conns = append(conns, &Conn{p: p, lease: l, c: l.Value()})
	}
}

// With takes a connection, calls fn with it, and gives it back, even when
// fn panics. The pool's methods called with the context fn receives use
// the same connection — a With, Acquire, Exec or Query nested in fn runs
// on it — so code that takes a context need not know whether it runs
// inside a transaction begun on that connection.
func (p *Pool) With(ctx context.Context, fn func(ctx context.Context, c *Conn) error) error {
	c, err := p.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return fn(c.lease.Bind(ctx), c)
}

// take is Acquire without the Conn: the one-call methods use the lease
// alone.
func (p *Pool) take(ctx context.Context) (l actorpool.Lease[*pooledConn], err error) {
	t := p.acquireTracer
	if t == nil {
		return p.takeLease(ctx)
	}
	ctx = t.TraceAcquireStart(ctx, p, TraceAcquireStartData{})
	// A hook that panics (ShouldPing, PrepareConn) still ends the take's
	// trace, as a failure, and its panic goes on.
	panicked := true
	defer func() {
		var conn *pgx.Conn
		switch {
		case panicked:
			err = errHookPanicked
		case err == nil:
			conn = l.Value().Conn
		}
		t.TraceAcquireEnd(ctx, p, TraceAcquireEndData{Conn: conn, Err: err})
	}()
	l, err = p.takeLease(ctx)
	panicked = false
	return l, err
}

// errHookPanicked is the error a take's trace ends with when a hook of
// the take panicked.
var errHookPanicked = errors.New("pgpool: a hook panicked while taking a connection")

// takeLease is take without its trace.
func (p *Pool) takeLease(ctx context.Context) (actorpool.Lease[*pooledConn], error) {
	// As pgxpool does: one more try than there are connections, so that
	// hooks that refuse every connection still see a fresh one.
	for range p.maxConns + 1 {
		// A take on a context already ended fails without waiting, and
		// actorpool counts it as no canceled wait; pgxpool counts it.
		var early bool
		if done := ctx.Done(); done != nil {
			select {
			case <-done:
				early = true
			default:
			}
		}
		l, err := p.pool.Acquire(ctx)
		if err != nil {
			var we *actorpool.WaitError
			isWait := errors.As(err, &we)
			if early && isWait {
				p.canceledEarly.Add(1)
			}
			// actorpool counts as empty every failed take but those that
			// never looked: on a context already ended (no wait, so
			// Waited is zero) or on a closed pool. Where it is unsure, a
			// take is left counted, so that the count never goes down.
			if !(isWait && we.Waited == 0) && !errors.Is(err, actorpool.ErrClosed) {
				p.emptyFailed.Add(1)
			}
			return l, takeError(ctx, err)
		}
		if l.Nested() {
			return l, nil // a With's connection, prepared when it was taken
		}
		pc := l.Value()
		if p.shouldPing != nil && p.shouldPing(ctx, ShouldPingParams{Conn: pc.Conn, IdleDuration: pc.idleFor()}) {
			if err := p.ping(ctx, l); err != nil {
				if ctx.Err() != nil {
					return actorpool.Lease[*pooledConn]{}, ctx.Err()
				}
				continue // the connection was closed: take another
			}
		}
		if p.prepare != nil {
			ok, err := p.prepare(ctx, pc.Conn)
			if !ok {
				l.Destroy()
			}
			if err != nil {
				if ok {
					// Back to the pool as pgxpool puts it back: never
					// lent, it is neither traced as released nor passed to
					// AfterRelease.
					if p.trackIdle {
						pc.idleSince.Store(time.Now().UnixNano())
					}
					l.Release()
				}
				return actorpool.Lease[*pooledConn]{}, err
			}
			if !ok {
				continue
			}
		}
		return l, nil
	}
	return actorpool.Lease[*pooledConn]{}, errTooManyAttempts
}

var errTooManyAttempts = errors.New("pgpool: too many failed attempts acquiring connection; likely bug in PrepareConn, BeforeAcquire, or ShouldPing hook")

// takeError is what a failed take returns, as pgxpool returns it: ctx's
// own error when it ended, and the connect's own error when connecting
// failed, not the actorpool errors that wrap them.
func takeError(ctx context.Context, err error) error {
	var we *actorpool.WaitError
	if errors.As(err, &we) && ctx.Err() != nil {
		if ce := (*actorpool.CreateError)(nil); errors.As(we.LastCreateErr, &ce) && ce.Err != nil {
			// Connects are failing, and the take ended waiting for the
			// next, which the pool spaces out (see doc.go). pgxpool's
			// take, which connects itself, would mostly have returned the
			// connect's error: this error is both.
			return fmt.Errorf("%w; last connect error: %w", ctx.Err(), ce.Err)
		}
		return ctx.Err()
	}
	if ce, ok := err.(*actorpool.CreateError); ok && ce.Err != nil {
		return ce.Err
	}
	if err == actorpool.ErrClosed {
		return ErrClosedPool
	}
	return err
}

// ErrClosedPool is returned by takes from a closed pool. It matches both
// actorpool.ErrClosed and puddle.ErrClosedPool, which pgxpool returns,
// with errors.Is, and reads as the latter does.
var ErrClosedPool error = closedPoolError{}

type closedPoolError struct{}

func (closedPoolError) Error() string { return puddle.ErrClosedPool.Error() }

func (closedPoolError) Is(target error) bool {
	return target == actorpool.ErrClosed || target == puddle.ErrClosedPool
}

// pingGrace is how long a ping that ShouldPing asked for may go on after
// its take gave up, before it is canceled, as pgxpool allows.
const pingGrace = time.Minute

// ping pings a connection ShouldPing asked about, bounded by ctx's
// deadline and PingTimeout, and closes it if the ping fails. If ctx ends
// first, the take gives up at once, but the ping goes on, for up to
// pingGrace, and the connection goes back to the pool if it answers.
func (p *Pool) ping(ctx context.Context, l actorpool.Lease[*pooledConn]) error {
	pingCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	bounded := pingCtx
	var stops []context.CancelFunc
	if d, ok := ctx.Deadline(); ok {
		var stop context.CancelFunc
		bounded, stop = context.WithDeadline(bounded, d)
		stops = append(stops, stop)
	}
	if p.cfg.PingTimeout > 0 {
		var stop context.CancelFunc
		bounded, stop = context.WithTimeout(bounded, p.cfg.PingTimeout)
		stops = append(stops, stop)
	}
	done := make(chan error, 1)
	go func() {
		done <- l.Value().Ping(bounded)
		for _, stop := range stops {
			stop()
		}
	}()
	select {
	case err := <-done:
		cancel()
		if err != nil {
			l.Destroy()
		}
		return err
	case <-ctx.Done():
		go func() {
			grace := time.AfterFunc(pingGrace, cancel)
			err := <-done
			grace.Stop()
			cancel()
			if err != nil {
				l.Destroy()
			} else {
				l.Release()
			}
		}()
		return ctx.Err()
	}
}

// idleFor returns how long the connection has been idle, for ShouldPing.
func (c *pooledConn) idleFor() time.Duration {
	return time.Duration(time.Now().UnixNano() - c.idleSince.Load())
}

// give gives a lease back: the release tracer, then AfterRelease, on a
// goroutine of its own, for a connection fit for reuse.
func (p *Pool) give(l actorpool.Lease[*pooledConn]) {
	if l.Nested() {
		l.Release() // nothing given back: the With gives it
		return
	}
	pc := l.Value()
	if t := p.releaseTracer; t != nil {
		t.TraceRelease(p, TraceReleaseData{Conn: pc.Conn})
	}
	if p.trackIdle {
		pc.idleSince.Store(time.Now().UnixNano())
	}
	if p.afterRelease == nil || fitForReuse(pc) != nil {
		l.Release()
		return
	}
	go func() {
		if p.afterRelease(pc.Conn) {
			l.Release()
		} else {
			l.Destroy()
		}
	}()
}
