package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/actorpool/actorpool/bench/queues"
	"github.com/actorpool/actorpool/bench/servers"
)

// runQueues runs -suite queues: pgactor against River on the PostgreSQL
// server ACTORPOOL_POSTGRES names, count times, at the scale, or
// the quick one under -short, and prints the tables of medians.
func runQueues(count int, short bool, raw, from string) error {
	if raw != "" || from != "" {
		return errors.New("-suite queues writes no -raw file and reads no -from file: for benchstat, run BenchmarkQueues under go test")
	}
	addr := servers.Postgres.Addr()
	if err := servers.Postgres.Reach(addr); err != nil {
		return fmt.Errorf("-suite queues needs PostgreSQL: %w", err)
	}
	scale := queues.Full
	if short {
		scale = queues.Quick
	}
	return queues.Suite(context.Background(), addr, scale, count, os.Stderr, os.Stdout)
}
