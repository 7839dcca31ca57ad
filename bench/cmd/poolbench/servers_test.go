package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServersReplay makes the servers suite's tables and goals from a raw
// file, with no server: one PostgreSQL cell where pgpool has the most
// throughput but not the lowest p99, one Redis cell the other way round.
func TestServersReplay(t *testing.T) {
	raw := `goos: linux
pkg: github.com/actorpool/actorpool/bench
BenchmarkPostgres/query=select1/clients=1/pool=pgpool-2	100	33333 ns/op	30000 ops/s	40000 p50-ns	100000 p99-ns	7 allocs/op
BenchmarkPostgres/query=select1/clients=1/pool=pgxpool-2	100	50000 ns/op	20000 ops/s	45000 p50-ns	200000 p99-ns	6 allocs/op
BenchmarkPostgres/query=select1/clients=1/pool=sql-2	100	100000 ns/op	10000 ops/s	90000 p50-ns	50000 p99-ns	14 allocs/op
BenchmarkRedis/op=get/clients=8/pool=redispool-2	100	20000 ns/op	50000 ops/s	100000 p50-ns	1000 p99-ns	5 allocs/op
BenchmarkRedis/op=get/clients=8/pool=go-redis-2	100	25000 ns/op	40000 ops/s	150000 p50-ns	2000 p99-ns	7 allocs/op
BenchmarkRedis/op=get/clients=8/pool=redigo-2	100	16667 ns/op	60000 ops/s	90000 p50-ns	3000 p99-ns	6 allocs/op
`
	dir := t.TempDir()
	path := filepath.Join(dir, "raw.txt")
	if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	tables := captureStdout(t, func() error {
		return run("servers", 1, 1, "", "", false, dir, "", path)
	})
	for _, want := range []string{
		"## PostgreSQL: throughput, thousands of operations per second (ratio to pgpool)",
		"| select1 | 1 | 30.0 (1.00×) | 20.0 (0.67×) | 10.0 (0.33×) |",
		"## Redis: p99 latency of an operation, µs (ratio to redispool)",
		"| get | 8 | 1 (1.00×) | 2 (2.00×) | 3 (3.00×) |",
		"| PostgreSQL: pgpool throughput ≥ the best of pgxpool and sql, every cell | 1 of 1 cells | met |",
		"| PostgreSQL: pgpool p99 below the lower of pgxpool's and sql's, every cell | 0 of 1 cells | **missed** |",
		"| Redis: redispool throughput ≥ the best of go-redis and redigo, every cell | 0 of 1 cells | **missed** |",
		"| Redis: redispool p99 below the lower of go-redis's and redigo's, every cell | 1 of 1 cells | met |",
		"- PostgreSQL query=select1/clients=1: p99 2.00× of sql's",
		"- Redis op=get/clients=8: throughput 0.83× of redigo's",
	} {
		if !strings.Contains(tables, want) {
			t.Errorf("tables made from the raw file lack %q:\n%s", want, tables)
		}
	}
	// Cells the file has no runs of have no rows.
	if strings.Contains(tables, "| 256 |") || strings.Contains(tables, "| lookup |") {
		t.Errorf("tables have rows for cells the raw file has no runs of:\n%s", tables)
	}

}

func TestServersSuiteNamesItsPools(t *testing.T) {
	err := run("servers", 1, 1, "puddle", "", true, t.TempDir(), "", "")
	if err == nil || !strings.Contains(err.Error(), `"puddle"`) || !strings.Contains(err.Error(), "pgpool") {
		t.Errorf("-suite servers -pools puddle: error %v, want one naming puddle and the adapters", err)
	}
}
