package pgpool

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// A stallConn is a connection to the server whose reads can be made to
// hang, as if the server stopped answering, until the connection is
// closed.
type stallConn struct {
	net.Conn
	stall   atomic.Bool
	reading atomic.Int32 // reads in progress
	closed  chan struct{}
	once    sync.Once
}

func (c *stallConn) Read(b []byte) (int, error) {
	c.reading.Add(1)
	defer c.reading.Add(-1)
	if c.stall.Load() {
		<-c.closed
		return 0, net.ErrClosed
	}
	return c.Conn.Read(b)
}

func (c *stallConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// TestHealthCheckPingPastTimeout stalls the health check's ping past
// PingTimeout. The pool then destroys the connection while the ping still
// runs on another goroutine, and a pgx.Conn is not safe for two: Destroy
// must only cut the socket, which ends the ping, and leave the goodbye —
// BeforeClose and pgx's Close — to the ping's goroutine once the ping has
// returned. Run under -race, the race detector sees a Close beside the
// ping; without it, BeforeClose would find the ping's read still blocked.
func TestHealthCheckPingPastTimeout(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	var conns []*stallConn
	var mu sync.Mutex
	var closes, overlaps atomic.Int32
	p := newPGPool(t, dsn, testName(), func(c *Config) {
		c.MaxConns = 1
		c.HealthCheckPeriod = 20 * time.Millisecond
		c.PingTimeout = 100 * time.Millisecond
		c.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			sc := &stallConn{Conn: nc, closed: make(chan struct{})}
			mu.Lock()
			conns = append(conns, sc)
			mu.Unlock()
			return sc, nil
		}
		c.BeforeClose = func(*pgx.Conn) {
			closes.Add(1)
			mu.Lock()
			defer mu.Unlock()
			if conns[0].reading.Load() > 0 {
				overlaps.Add(1)
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	conns[0].stall.Store(true) // not the cancel request pgx sends on a connection of its own
	mu.Unlock()
	testenv.Eventually(t, 20*time.Second, "the stalled ping to time out", func() bool {
		return p.Stats().DestroyedBy.TestTimeout == 1
	})
	testenv.Eventually(t, 20*time.Second, "the connection to be closed", func() bool { return closes.Load() == 1 })
	if n := overlaps.Load(); n != 0 {
		t.Error("BeforeClose ran while the ping still read from the connection: Destroy closed it under the ping")
	}
	if err := p.Ping(ctx); err != nil {
		t.Errorf("Ping on a new connection after the stall: %v", err)
	}
}
