package redispool

import (
	"context"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/gomodule/redigo/redis"
)

// faults is the fault suite of internal/testenv, run on redispool: its
// calls are PING and BLPOP on an empty list, its sessions are named by
// CLIENT SETNAME and ended with CLIENT KILL.
var faults = testenv.FaultSuite[*Pool, *Conn]{
	Timeout: time.Second,
	Shared:  testenv.Redis,
	Private: func(t testing.TB) (testenv.OutageServer, string) {
		srv := testenv.PrivateRedis(t)
		return srv, srv.Addr()
	},
	HostPort: func(_ testing.TB, addr string) string { return addr },
	Move:     func(_ testing.TB, _, hostport string) string { return hostport },
	Open: func(t testing.TB, addr, name string, tune func(*actorpool.Config), dial testenv.DialFunc) *Pool {
		var cfg actorpool.Config
		tune(&cfg)
		return newRedisPool(t, addr, name, cfg, dial)
	},
	Admin: func(t testing.TB, addr string) testenv.FaultAdmin { return redisAdmin{t, admin(t, addr)} },
	Call: func(p *Pool, ctx context.Context) error {
		_, err := p.Do(ctx, "PING")
		return err
	},
	Ping: func(c *Conn, ctx context.Context) error {
		_, err := c.DoContext(ctx, "PING")
		return err
	},
	Block: func(p *Pool, ctx context.Context) error {
		_, err := p.Do(ctx, "BLPOP", "actorpool:fault:empty", 30)
		return err
	},
	AfterBlock: func(t *testing.T, p *Pool, addr, name string) {
		adm := admin(t, addr)
		testenv.Eventually(t, 10*time.Second, "the server to drop the interrupted clients", func() bool {
			return len(clientIDs(t, adm, name, "cmd=blpop")) == 0
		})
		if v, err := redis.Values(p.Do(context.Background(), "BLPOP", "actorpool:fault:empty", "0.01")); err != redis.ErrNil || v != nil {
			t.Errorf("BLPOP after = %v, %v; want a nil reply", v, err)
		}
	},
}

// redisAdmin looks at and ends clients by their name.
type redisAdmin struct {
	t   testing.TB
	adm redis.Conn
}

func (a redisAdmin) Sessions(name string) []string { return clientIDs(a.t, a.adm, name) }

func (a redisAdmin) Kill(name string) {
	for _, id := range clientIDs(a.t, a.adm, name) {
		if _, err := a.adm.Do("CLIENT", "KILL", "ID", id); err != nil {
			a.t.Fatal(err)
		}
	}
}

// TestFault runs the fault suite: a private server stopped under load, or
// for 2s while the pool's connects are counted; clients killed idle and in
// use; a server down when the pool starts; commands past their deadline.
func TestFault(t *testing.T) { faults.Run(t) }
