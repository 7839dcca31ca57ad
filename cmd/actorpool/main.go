package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

func main() {
	// The demo handles SIGINT and SIGTERM itself, to stop gracefully; the
	// context ends on the first, and a second one kills the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, stop, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `actorpool shows the actorpool library at work.

Usage:

  actorpool demo [flags]            pool connections to a server under load, live
  actorpool config check FILE...    check configuration files, report every problem
  actorpool migrate --postgres URL  create or upgrade the durable actors' tables
  actorpool console --postgres URL  a web console on the durable actors
  actorpool console --jetstream     the same, for those on NATS JetStream
  actorpool bench                   how to run the benchmark comparison
  actorpool help [COMMAND]          explain a command

Start with:

  actorpool demo                    10s against an embedded Redis server
  actorpool demo --clients 64 --size 4 --duration 30s
  actorpool demo --redis 127.0.0.1:6379
  actorpool demo --postgres postgres://postgres@127.0.0.1:5432/postgres
  actorpool demo --jetstream        a durable audit actor on embedded NATS JetStream
  actorpool demo --config examples/actorpool.yaml --metrics 127.0.0.1:9090

Exit codes: 0 success, 1 failure, 2 usage error, 130 stopped by Ctrl-C.
`

// run runs the command line args and returns the exit code. stop restores
// the default handling of signals, so that a second Ctrl-C kills the
// process while the demo shuts down.
func run(ctx context.Context, stop func(), args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "demo":
		return runDemo(ctx, stop, rest, stdout, stderr)
	case "config":
		return runConfig(rest, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, stdout, stderr)
	case "console":
		return runConsole(ctx, rest, stdout, stderr)
	case "bench":
		return runBench(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		return runHelp(rest, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "actorpool: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
}

func runHelp(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	switch args[0] {
	case "demo":
		return runDemo(context.Background(), func() {}, []string{"-h"}, stdout, stderr)
	case "config":
		return runConfig([]string{"-h"}, stdout, stderr)
	case "migrate":
		return runMigrate(context.Background(), []string{"-h"}, stdout, stderr)
	case "console":
		return runConsole(context.Background(), []string{"-h"}, stdout, stderr)
	case "bench":
		return runBench([]string{"-h"}, stdout, stderr)
	}
	fmt.Fprintf(stderr, "actorpool help: unknown command %q; the commands are demo, config, migrate, console and bench\n", args[0])
	return exitUsage
}

// parseFlags parses args with fs, whose usage is printed to stdout when
// help is asked for and to stderr on a mistake. It returns the exit code
// to stop with, or -1 to go on.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "actorpool %s: %v\n", fs.Name(), err)
		fmt.Fprintf(stderr, "Run 'actorpool help %s' for its flags.\n", fs.Name())
		return exitUsage
	}
	return -1
}
