// Command poolbench compares actorpool with the other Go pools, and the
// task actor with the Go worker pools, in one run; and, with -suite
// servers, actorpool's adapters pgpool and redispool with pgxpool,
// database/sql, go-redis and redigo on real PostgreSQL and Redis servers.
//
// It first checks that every pool lends correctly (pools.Check), then runs
// each workload with every pool back to back in each cell, -count times
// over, prints markdown tables of the medians with each pool's ratio to
// actorpool (or each executor's to the actor and to the channel floor), and
// draws SVG charts of the contended matrix: throughput against goroutines,
// one line per pool, and the latency percentiles of a take.
//
// The servers suite finds its servers through ACTORPOOL_POSTGRES (a
// connection URL) and ACTORPOOL_REDIS (host:port), defaulting to servers on
// this machine's usual ports; it leaves out a server it cannot reach,
// saying so, and checks every pool (servers.Check) before it measures.
// Its tables give throughput and the p50 and p99 of an operation, with
// each pool's ratio to ours, and a goals table. -suite queues compares
// pgactor, the durable actor, with River on the same PostgreSQL (package
// queues): each count runs every cell, both queues in turn, and the
// tables give medians and pgactor's ratio to River; -short runs it at the
// quick scale. -suite all runs pools and tasks, which need no server.
//
// Usage, from the bench module:
//
//	go run ./cmd/poolbench [flags]
//
// The flags are:
//
//	-suite pools|tasks|servers|queues|all   which comparison to run (default all: pools and tasks)
//	-count n                         runs of each benchmark (default 1); tables show medians
//	-benchtime d                     time per benchmark (default 200ms)
//	-pools a,b                       only these pools, or with -suite servers these adapters (default all)
//	-execs a,b                       only these executors (default all)
//	-short                           contended cells up to 64 goroutines, task cells up to 64 producers,
//	                                 server cells up to 64 clients
//	-out dir                         where the charts go (default ".")
//	-raw file                        also write every run in Go benchmark format, for benchstat
//	-from file                       run nothing: make the tables and charts from a -raw file
//
// Give its -raw file to benchstat for confidence intervals:
//
//	go tool benchstat -col /pool raw.txt
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/actorpool/actorpool/bench/pools"
	"github.com/actorpool/actorpool/bench/queues"
	"github.com/actorpool/actorpool/bench/servers"
	"github.com/actorpool/actorpool/bench/tasks"
)

func main() {
	// The recovery cell of -suite queues re-runs this binary as the worker
	// process it kills.
	queues.MaybeChild()
	testing.Init()
	// A flag set of its own: vitess, imported for smartconnpool, registers
	// glog's flags on the global one, and they have nothing to do here.
	fs := flag.NewFlagSet("poolbench", flag.ExitOnError)
	var (
		suite     = fs.String("suite", "all", "which comparison to run: pools, tasks, servers, queues, or all (pools and tasks)")
		count     = fs.Int("count", 1, "runs of each benchmark; the tables show medians")
		benchtime = fs.Duration("benchtime", 200*time.Millisecond, "time per benchmark")
		poolList  = fs.String("pools", "", "comma-separated pools, or with -suite servers adapters, to run (default all)")
		execList  = fs.String("execs", "", "comma-separated executors to run (default all)")
		short     = fs.Bool("short", false, "run only the cells with at most 64 goroutines, producers or clients; with -suite queues, the quick scale")
		out       = fs.String("out", ".", "directory for the SVG charts")
		raw       = fs.String("raw", "", "file to write every run to in Go benchmark format, for benchstat")
		from      = fs.String("from", "", "run nothing: make the tables and charts from this -raw file")
	)
	fs.Parse(os.Args[1:])
	if err := run(*suite, *count, *benchtime, *poolList, *execList, *short, *out, *raw, *from); err != nil {
		fmt.Fprintln(os.Stderr, "poolbench:", err)
		os.Exit(1)
	}
}

func run(suite string, count int, benchtime time.Duration, poolList, execList string, short bool, out, raw, from string) error {
	if suite != "pools" && suite != "tasks" && suite != "servers" && suite != "queues" && suite != "all" {
		return fmt.Errorf("-suite is %q; it must be pools, tasks, servers, queues or all", suite)
	}
	if count < 1 {
		return fmt.Errorf("-count is %d; it must be at least 1", count)
	}
	if suite == "queues" {
		return runQueues(count, short, raw, from)
	}
	if benchtime <= 0 {
		return fmt.Errorf("-benchtime is %v; it must be positive", benchtime)
	}
	if err := flag.Set("test.benchtime", benchtime.String()); err != nil {
		return err
	}
	// -pools names adapters for the servers suite and object pools for
	// the others.
	var ps []pools.Contender
	var ss []servers.Contender
	var err error
	if suite == "servers" {
		ss, err = servers.Select(poolList)
	} else {
		ps, err = pools.Select(poolList)
	}
	if err != nil {
		return err
	}
	es, err := tasks.Select(execList)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}

	var src source
	if from != "" {
		f, err := os.Open(from)
		if err != nil {
			return err
		}
		rp, err := readRaw(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("reading %s: %w", from, err)
		}
		src, count = rp, rp.most
	} else {
		rec := &recorder{log: os.Stderr}
		if raw != "" {
			f, err := os.Create(raw)
			if err != nil {
				return err
			}
			defer f.Close()
			rec.raw = f
		}
		rec.header()
		src = rec
	}

	if suite == "pools" || suite == "all" {
		if from == "" {
			ps = checkPools(ps, os.Stderr)
		}
		if len(ps) == 0 {
			return fmt.Errorf("no pool passed the correctness check")
		}
		res := runPools(src, ps, count, short)
		printPoolTables(os.Stdout, res)
		if !res.hasContended() {
			// A replay of a raw file without the contended runs: no line
			// to draw, and the plotting library fails on empty panels.
			fmt.Fprintln(os.Stderr, "no contended runs: no charts drawn")
		}
		for _, chart := range []struct {
			name string
			draw func(io.Writer, *poolResults) error
		}{
			{"throughput.svg", drawThroughput},
			{"latency.svg", drawLatency},
		} {
			if !res.hasContended() {
				break
			}
			if err := writeChart(filepath.Join(out, chart.name), res, chart.draw); err != nil {
				return err
			}
		}
	}
	if suite == "tasks" || suite == "all" {
		res := runTasks(src, es, count, short)
		printTaskTables(os.Stdout, res)
	}
	if suite == "servers" {
		// A replay runs nothing: every server, whatever its address.
		addrs := map[servers.Server]string{servers.Postgres: "", servers.Redis: ""}
		if from == "" {
			addrs, ss = prepareServers(ss, os.Stderr)
		}
		if len(ss) == 0 {
			return fmt.Errorf("no server to measure on: start PostgreSQL and Redis, or set %s and %s to their addresses", servers.PostgresVar, servers.RedisVar)
		}
		res := runServers(src, ss, addrs, count, short)
		printServerTables(os.Stdout, res)
	}
	return nil
}

// checkPools returns the pools that pass pools.Check, and says why the
// others are left out.
func checkPools(ps []pools.Contender, log io.Writer) []pools.Contender {
	var ok []pools.Contender
	for _, c := range ps {
		if err := pools.Check(context.Background(), c); err != nil {
			fmt.Fprintf(log, "left out, failed the correctness check: %v\n", err)
			continue
		}
		ok = append(ok, c)
	}
	return ok
}

func writeChart(path string, res *poolResults, draw func(io.Writer, *poolResults) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := draw(f, res); err != nil {
		f.Close()
		return fmt.Errorf("drawing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s\n", path)
	return nil
}
