package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/actorpool/actorpool/bench/servers"
	"github.com/actorpool/actorpool/internal/testenv"
	goredis "github.com/redis/go-redis/v9"
)

// outage is the load of BenchmarkOutage, the one the adapters' fault tests
// TestFault/OutageRecovery run: 64 clients with 1s deadlines on a pool of
// 16, and the server down for 2s.
var outage = testenv.Outage{Clients: 64, Size: servers.Size, Deadline: time.Second, Down: 2 * time.Second}

// BenchmarkOutage stops a private PostgreSQL, then a private Redis, under
// each pool of the comparison, and starts it again: one outage per
// iteration, measured by testenv.MeasureOutage. It reports the pool's
// connection attempts per second while the server was down (all of them,
// and those of the last second), the milliseconds from the server
// accepting sessions again to the first call that succeeded, to the pool
// having dialed all its connections, and to their being open and answered
// by the server, and the calls waiting then with half their deadline
// left, and how many of those failed. A private server
// needs root (PostgreSQL runs as the postgres user); without it the
// benchmark skips, or fails under CI.
//
//	go test -run '^$' -bench Outage -benchtime 1x -count 5 .
func BenchmarkOutage(b *testing.B) {
	// go-redis logs its failed dials to the process's output, in the middle
	// of the benchmark's result lines; the report says what failed.
	goredis.SetLogger(quiet{})
	for _, s := range servers.Servers {
		b.Run("server="+s.BenchName(), func(b *testing.B) {
			var srv testenv.OutageServer
			if s == servers.Postgres {
				srv = testenv.PrivatePostgres(b)
			} else {
				srv = testenv.PrivateRedis(b)
			}
			for _, c := range servers.Of(servers.All(), s) {
				b.Run("pool="+c.Name, func(b *testing.B) { benchOutage(b, srv, c) })
			}
		})
	}
}

func benchOutage(b *testing.B, srv testenv.OutageServer, c servers.Contender) {
	var perSec, lastSec, waiting, failed float64
	var firstOK, dialed, full millis
	for range b.N {
		r := testenv.MeasureOutage(b, srv, outage, func(dial testenv.DialFunc) (func(context.Context) error, func()) {
			addr := srv.Addr()
			if c.Server == servers.Postgres {
				addr = "postgres://postgres@" + addr + "/postgres?sslmode=disable"
			}
			p, err := c.New(addr, outage.Size, servers.Dialer(dial))
			if err != nil {
				b.Fatal(err)
			}
			return outageCall(p), func() { p.Close() }
		})
		b.Log(r)
		perSec += r.PerSecond()
		lastSec += float64(r.LastSecond)
		firstOK.add(r.FirstOK)
		dialed.add(r.Dialed)
		full.add(r.Full)
		waiting += float64(r.Waiting)
		failed += float64(r.WaitFailed)
	}
	n := float64(b.N)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(perSec/n, "attempts/s")
	b.ReportMetric(lastSec/n, "attempts-last-s")
	b.ReportMetric(firstOK.mean(n), "first-ms")
	b.ReportMetric(dialed.mean(n), "dialed-ms")
	b.ReportMetric(full.mean(n), "full-ms")
	b.ReportMetric(waiting/n, "waiting")
	b.ReportMetric(failed/n, "waiting-failed")
}

// millis sums durations in milliseconds, remembering whether one was
// negative: never.
type millis struct {
	sum   float64
	never bool
}

func (m *millis) add(d time.Duration) {
	m.never = m.never || d < 0
	m.sum += float64(d) / float64(time.Millisecond)
}

// mean returns the mean of n durations, or -1 if one was never: an
// average would hide it.
func (m millis) mean(n float64) float64 {
	if m.never {
		return -1
	}
	return m.sum / n
}

// outageCall returns the call the clients make: SELECT 1 on PostgreSQL, a
// SET on Redis, which need no data prepared.
func outageCall(p servers.Pool) func(context.Context) error {
	switch p := p.(type) {
	case servers.PostgresPool:
		return func(ctx context.Context) error {
			_, err := p.Select1(ctx)
			return err
		}
	case servers.RedisPool:
		return func(ctx context.Context) error { return p.Set(ctx, servers.Keys[0], servers.Values[0]) }
	}
	panic("servers: a pool that is neither a PostgresPool nor a RedisPool")
}

// quiet is a go-redis logger that logs nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
