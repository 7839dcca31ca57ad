package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// An OutageServer is a private server that MeasureOutage stops and starts:
// a *PGServer or a *RedisServer.
type OutageServer interface {
	Addr() string
	Stop()
	Start()
	Ready() bool
}

// An Outage is the load under which MeasureOutage stops a server and starts
// it again.
type Outage struct {
	Clients  int           // goroutines calling in a loop, as StartLoad's workers
	Size     int           // the pool's most connections
	Deadline time.Duration // each call's deadline
	Down     time.Duration // how long the server stays stopped
}

// An OutageReport is what MeasureOutage measured. Back is the moment the
// server was seen to accept a session again: it had answered a startup
// message, or a PING; FirstOK and Full count from it.
type OutageReport struct {
	Down       time.Duration // from Stop's return to the call of Start
	Attempts   int           // connections the pool tried to open meanwhile (dials)
	LastSecond int           // of them, those in the last second
	FirstOK    time.Duration // until a call first succeeded; -1 if none did
	Dialed     time.Duration // until the pool had dialed Size connections that the server answered; -1 if never
	Full       time.Duration // until Size connections were open and answered; -1 if never

	// Waiting counts the calls waiting at Back with more than half their
	// deadline left; WaitFailed those of them that failed, and
	// WaitTimedOut those that failed by their deadline.
	Waiting, WaitFailed, WaitTimedOut int
	FirstWaitErr                      error // the error of the first of them that failed
}

// PerSecond returns the pool's connection attempts per second while the
// server was down: stopped, and not yet starting.
func (r OutageReport) PerSecond() float64 { return float64(r.Attempts) / r.Down.Seconds() }

func (r OutageReport) String() string {
	s := fmt.Sprintf("down %s: %d connection attempts, %.1f a second, %d in its last second; back after its start: first success %s, all connections dialed %s, pool full %s; %d calls waiting then, %d failed (%d by their deadline)",
		ms(r.Down), r.Attempts, r.PerSecond(), r.LastSecond, ms(r.FirstOK), ms(r.Dialed), ms(r.Full), r.Waiting, r.WaitFailed, r.WaitTimedOut)
	if r.FirstWaitErr != nil {
		s += ", the first with: " + r.FirstWaitErr.Error()
	}
	return s
}

func ms(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return d.Round(time.Millisecond).String()
}

// Check fails t unless the pool came through the outage as actorpool's
// pools must, with room for a busy machine: about ten connection attempts
// a second while the server was down (from 5 to 30 in its last second:
// enough to find it back within some 100ms, too few to hammer it), a
// success once it was back, and every call that was waiting then with half
// its deadline left served, but for one that a connection attempt begun
// just before the server was back may fail with that attempt's error.
func (r OutageReport) Check(t testing.TB) {
	t.Helper()
	if r.LastSecond < 5 || r.LastSecond > 30 {
		t.Errorf("%d connection attempts in the last second the server was down, want about 10", r.LastSecond)
	}
	if r.FirstOK < 0 {
		t.Errorf("no call succeeded once the server was back")
	}
	if r.Waiting == 0 {
		t.Errorf("no call was waiting when the server came back: the outage tested nothing")
	}
	if r.WaitTimedOut > 0 || r.WaitFailed > 1 {
		t.Errorf("%d of the %d calls waiting when the server came back failed, %d by their deadline, the first with: %v",
			r.WaitFailed, r.Waiting, r.WaitTimedOut, r.FirstWaitErr)
	}
}

// A DialFunc opens a network connection, as net.Dialer.DialContext does;
// pgx's ConnConfig.DialFunc, go-redis's Options.Dialer and redigo's
// DialContextFunc all take one.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// MeasureOutage measures what a pool does while its server is down and how
// it comes back. It gives open a DialFunc for the pool's connections to
// srv, which records each connection attempt and when the server first
// answers on each connection; open returns a call through a new pool made
// with it, and what closes that pool. It runs o.Clients goroutines that
// make the call in a loop, each under o.Deadline (StartLoad; a client whose
// call waits out its deadline pauses a random part of another before the
// next). Once every client has succeeded, it stops srv, counts the pool's
// attempts for o.Down, starts srv again, and waits until every call that
// was waiting when srv was back has ended and the pool holds o.Size
// connections (or fillWait has passed). srv is back when Ready, polled
// every millisecond, first says so: a starting PostgreSQL accepts TCP
// connections well before it accepts sessions.
//
// The attempts are counted where the pool dials, not by a proxy, so that
// the server down refuses them as it would any client's: a proxy would
// accept the connection and close it, which a pool that sends nothing on
// connecting (redigo's dial) takes for a connection made.
//
// It is a measurement against a real server, not a timed unit test: a test
// that asserts on what it returns must leave room for a busy machine.
func MeasureOutage(t testing.TB, srv OutageServer, o Outage, open func(dial DialFunc) (call func(ctx context.Context) error, closePool func())) OutageReport {
	t.Helper()
	var dials dialLog
	call, closePool := open(dials.dial)
	var log callLog
	load := StartLoad(t, o.Clients, o.Deadline, func(ctx context.Context) error {
		start := time.Now()
		err := call(ctx)
		end := time.Now()
		log.add(start, end, err)
		if err != nil && end.Sub(start) >= o.Deadline {
			// A client whose call waited out its deadline pauses a random
			// part of another before the next, so that the clients'
			// waits, which all began when the server went down, spread
			// over their deadlines: some are half over when it comes
			// back, some just begun.
			time.Sleep(rand.N(o.Deadline))
		}
		return err
	})
	load.WaitAllSucceed(t, 30*time.Second)

	srv.Stop()
	stopped := time.Now()
	log.from(stopped)
	time.Sleep(o.Down)
	backc := make(chan time.Time, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			if srv.Ready() {
				backc <- time.Now()
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	starting := time.Now()
	srv.Start()
	var back time.Time
	select {
	case back = <-backc:
	case <-time.After(serverWait):
		t.Fatalf("the server accepted no session within %v of starting", serverWait)
	}
	// Every call waiting at back ends by its deadline; the pool may take
	// longer to open all its connections.
	time.Sleep(time.Until(back.Add(o.Deadline + 100*time.Millisecond)))
	for time.Since(back) < fillWait && dials.answered() < o.Size {
		time.Sleep(10 * time.Millisecond)
	}
	load.Stop()
	if closePool != nil {
		closePool()
	}
	load.Check(t)
	r := OutageReport{Down: starting.Sub(stopped)}
	dials.report(&r, o, stopped, starting, back)
	log.report(&r, o, back)
	return r
}

// fillWait bounds how long after the server is back MeasureOutage waits
// for the pool to open all its connections.
const fillWait = 5 * time.Second

func (d *dialLog) answered() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.open
}

// A dialLog dials for a pool under measurement and records its connection
// attempts, and the server's first answer on each connection.
type dialLog struct {
	mu       sync.Mutex
	attempts []time.Time
	cancels  []time.Time // attempts that were PostgreSQL CancelRequests
	answers  []answer
	open     int // connections open that the server has answered on
}

// An answer is the server's first answer on a connection.
type answer struct {
	at, dialed time.Time
	open       int // connections open then that the server had answered on, this one included
}

func (d *dialLog) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	at := time.Now()
	d.mu.Lock()
	d.attempts = append(d.attempts, at)
	d.mu.Unlock()
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &loggedConn{Conn: c, d: d, at: at}, nil
}

// report counts the attempts from stopped to starting, when the server was
// down, and finds when the pool was full again.
func (d *dialLog) report(r *OutageReport, o Outage, stopped, starting, back time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	count := func(ts []time.Time, from time.Time) (n int) {
		for _, at := range ts {
			if !at.Before(from) && at.Before(starting) {
				n++
			}
		}
		return n
	}
	r.Attempts = count(d.attempts, stopped) - count(d.cancels, stopped)
	last := starting.Add(-time.Second)
	r.LastSecond = count(d.attempts, last) - count(d.cancels, last)
	r.Dialed, r.Full = -1, -1
	var dialed []time.Time
	for _, a := range d.answers {
		if !a.at.After(stopped) {
			continue
		}
		if dialed = append(dialed, a.dialed); len(dialed) == o.Size {
			slices.SortFunc(dialed, time.Time.Compare)
			r.Dialed = max(dialed[o.Size-1].Sub(back), 0)
		}
		if a.open >= o.Size && r.Full < 0 {
			r.Full = max(a.at.Sub(back), 0)
		}
	}
}

// pgCancelCode is the code, 80877102, that follows the length at the start
// of a PostgreSQL CancelRequest.
var pgCancelCode = []byte{0x04, 0xd2, 0x16, 0x2e}

// A loggedConn is a connection that a dialLog made. It tells the log when
// the server first answers on it, when it ends, and whether it was a
// PostgreSQL CancelRequest: pgx sends one on a connection of its own to
// stop a query, or a connect that failed after the TCP handshake (the
// server was shutting down or starting up); it is not an attempt to open a
// connection for the pool.
type loggedConn struct {
	net.Conn
	d                      *dialLog
	at                     time.Time
	wrote, answered, ended bool // guarded by d.mu
}

func (c *loggedConn) Write(b []byte) (int, error) {
	c.d.mu.Lock()
	if !c.wrote {
		c.wrote = true
		if len(b) >= 8 && bytes.Equal(b[4:8], pgCancelCode) {
			c.d.cancels = append(c.d.cancels, c.at)
		}
	}
	c.d.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *loggedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 || err != nil {
		c.d.mu.Lock()
		if n > 0 && !c.answered && !c.ended {
			c.answered = true
			c.d.open++
			c.d.answers = append(c.d.answers, answer{at: time.Now(), dialed: c.at, open: c.d.open})
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			c.endLocked() // the server closed it, or the network did
		}
		c.d.mu.Unlock()
	}
	return n, err
}

func (c *loggedConn) Close() error {
	c.d.mu.Lock()
	c.endLocked()
	c.d.mu.Unlock()
	return c.Conn.Close()
}

func (c *loggedConn) endLocked() {
	if !c.ended {
		c.ended = true
		if c.answered {
			c.d.open--
		}
	}
}

// SyscallConn gives the underlying connection's, for clients that look at
// the socket itself, as go-redis does to find connections closed by the
// server.
func (c *loggedConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("testenv: the connection has no file descriptor")
	}
	return sc.SyscallConn()
}

// A callLog records the calls of a load that end after a moment.
type callLog struct {
	since atomic.Int64 // unix ns; 0 while not recording
	mu    sync.Mutex
	calls []call
}

type call struct {
	start, end time.Time
	err        error
}

func (l *callLog) from(t time.Time) { l.since.Store(t.UnixNano()) }

func (l *callLog) add(start, end time.Time, err error) {
	if s := l.since.Load(); s == 0 || end.UnixNano() < s {
		return
	}
	l.mu.Lock()
	l.calls = append(l.calls, call{start, end, err})
	l.mu.Unlock()
}

func (l *callLog) report(r *OutageReport, o Outage, back time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var firstOK time.Time
	for _, c := range l.calls {
		if c.err == nil && (firstOK.IsZero() || c.end.Before(firstOK)) {
			firstOK = c.end
		}
		if c.start.Before(back) && c.end.After(back) && c.start.Add(o.Deadline).Sub(back) > o.Deadline/2 {
			r.Waiting++
			if c.err != nil {
				r.WaitFailed++
				if errors.Is(c.err, context.DeadlineExceeded) {
					r.WaitTimedOut++
				}
				if r.FirstWaitErr == nil {
					r.FirstWaitErr = c.err
				}
			}
		}
	}
	r.FirstOK = -1
	if !firstOK.IsZero() {
		r.FirstOK = max(firstOK.Sub(back), 0)
	}
}
