package netpool

import (
	"context"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/testenv"
)

// TestPingStalledPastTimeout runs a Ping that the server never answers
// and that ignores its context's deadline, as a protocol client with read
// timeouts of its own does: the pool destroys the connection at
// TestTimeout while Ping still waits, and Destroy must then close only the
// socket under the connection Dial returned (which ends the wait) and
// leave closing that connection — its goodbye — to the test's goroutine.
// The connections Dial returns say goodbye on Close, and must not be
// closed beside a Read (see testenv.FragileConn); under -race too.
func TestPingStalledPastTimeout(t *testing.T) {
	testenv.CheckGoroutines(t)
	srv := startLineServer(t, "127.0.0.1:0")
	var d testenv.FragileDialer
	const n = 2
	p := newPool(t, Config{
		Addr: srv.addr,
		Dial: d.Dial,
		Ping: func(ctx context.Context, c *Conn) error {
			c.SetDeadline(time.Now().Add(time.Minute))
			_, err := roundTrip(c, "hang")
			return err
		},
		Pool: actorpool.Config{MaxObjects: n, MinIdle: n, ValidationInterval: 10 * time.Millisecond, TestTimeout: 50 * time.Millisecond},
	})
	testenv.Eventually(t, 20*time.Second, "pings to outlive TestTimeout", func() bool { return p.Stats().DestroyedBy.TestTimeout >= 2*n })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(d.Conns()) < 2*n {
		t.Errorf("%d connections dialed, want at least %d", len(d.Conns()), 2*n)
	}
	d.Check(t)
}
