package bench_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool/bench/servers"
)

// serverChecked fails b unless c passes servers.Check against the server
// at addr, which runs once per pool and process: no pool is measured
// before it is shown to answer correctly.
func serverChecked(b *testing.B, c servers.Contender, addr string) {
	b.Helper()
	serverChecksMu.Lock()
	once, ok := serverChecks[c.Name]
	if !ok {
		once = sync.OnceValue(func() error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			return servers.Check(ctx, c, addr)
		})
		serverChecks[c.Name] = once
	}
	serverChecksMu.Unlock()
	if err := once(); err != nil {
		b.Fatalf("correctness check failed, not measuring: %v", err)
	}
}

var (
	serverChecksMu sync.Mutex
	serverChecks   = map[string]func() error{}
)

// benchServer runs the cells of server s, every pool back to back in each.
// It skips when the server cannot be reached, saying how to run it, and
// fails instead under CI. Under -short it runs only the cells with at most
// 64 clients.
func benchServer(b *testing.B, s servers.Server) {
	addr := servers.Need(b, s)
	for _, cell := range servers.Cells(s) {
		if testing.Short() && cell.Clients > 64 {
			continue
		}
		b.Run(cell.Name(), func(b *testing.B) {
			for _, c := range servers.Of(servers.All(), s) {
				b.Run("pool="+c.Name, func(b *testing.B) {
					serverChecked(b, c, addr)
					servers.Run(b, c, cell, addr)
				})
			}
		})
	}
}

// BenchmarkPostgres compares pgpool with pgxpool and database/sql over
// pgx's stdlib driver on the PostgreSQL server ACTORPOOL_POSTGRES names:
// SELECT 1 and a primary-key lookup, by 1 to 256 clients on 16
// connections.
func BenchmarkPostgres(b *testing.B) { benchServer(b, servers.Postgres) }

// BenchmarkRedis compares redispool with go-redis and redigo's Pool on the
// Redis server ACTORPOOL_REDIS names: GET and SET, by 1 to 256 clients on
// 16 connections.
func BenchmarkRedis(b *testing.B) { benchServer(b, servers.Redis) }
