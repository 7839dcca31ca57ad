package netpool

import (
	"context"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/testenv"
)

// TestConfigDefaults checks what New and NewWithConfig fill in, and that
// Config returns a copy.
func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		name string
		open func() (*Pool, error)
		want Config
	}{
		{"New", func() (*Pool, error) { return New("127.0.0.1:1") },
			Config{Network: "tcp", Addr: "127.0.0.1:1", Pool: actorpool.Config{Name: "netpool", MaxObjects: DefaultMaxConns()}}},
		{"NewWithConfig", func() (*Pool, error) {
			return NewWithConfig(&Config{Network: "unix", Addr: "/no/such.sock", Pool: actorpool.Config{Name: "svc", MaxObjects: 2}})
		}, Config{Network: "unix", Addr: "/no/such.sock", Pool: actorpool.Config{Name: "svc", MaxObjects: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.open()
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			got := p.Config()
			if got.Network != tt.want.Network || got.Addr != tt.want.Addr || got.Pool.Name != tt.want.Pool.Name || got.Pool.MaxObjects != tt.want.Pool.MaxObjects {
				t.Errorf("Config() = %+v, want %+v", got, tt.want)
			}
			got.Pool.MaxObjects++
			if p.Config().Pool.MaxObjects != tt.want.Pool.MaxObjects {
				t.Error("changing what Config returned changed the pool's")
			}
		})
	}
}

// TestDestroy checks that Destroy has the connection destroyed, and that
// in a With, where Release gives nothing back, nor does Release on a Conn
// acquired on the callback's context, Destroy has With destroy it.
func TestDestroy(t *testing.T) {
	srv := startLineServer(t, "127.0.0.1:0")
	tests := []struct {
		name string
		use  func(p *Pool) error
	}{
		{"acquired", func(p *Pool) error {
			c, err := p.Acquire(context.Background())
			if err != nil {
				return err
			}
			c.Destroy()
			c.Release() // does nothing
			return nil
		}},
		{"in With", func(p *Pool) error {
			return p.With(context.Background(), func(ctx context.Context, c *Conn) error {
				inner, err := p.Acquire(ctx)
				if err != nil {
					return err
				}
				inner.Release()
				if _, err := roundTrip(c, "still mine"); err != nil {
					return err
				}
				c.Destroy()
				return nil
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testenv.CheckGoroutines(t)
			p := newPool(t, Config{Addr: srv.addr, Pool: actorpool.Config{MaxObjects: 1}})
			if err := tt.use(p); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, 10*time.Second, "the connection to be destroyed", func() bool { return p.Stats().DestroyedBy.Discarded == 1 })
			checkNoSlotLost(t, p)
		})
	}
}
