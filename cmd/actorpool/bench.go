package main

import (
	"flag"
	"fmt"
	"io"
)

const benchHelp = `Usage: actorpool bench

The benchmark comparison of actorpool with the other Go pools (puddle under
pgxpool, database/sql's pool, go-commons-pool, vitess smartconnpool, a
channel pool) and sync.Pool, and of pgpool and redispool with pgxpool,
database/sql, go-redis and redigo on real servers, lives in the bench
module, so that this module does not depend on the pools it is compared
with. Run it from the
repository's root with:

  cd bench && go run ./cmd/poolbench                  # the pools and the task actor
  cd bench && go run ./cmd/poolbench -suite pools -short -out /tmp/poolbench
  cd bench && go run ./cmd/poolbench -suite servers    # pgpool and redispool on real servers
  cd bench && go run ./cmd/poolbench -help            # its flags

It prints markdown tables of each pool's results and its ratio to
actorpool, and writes SVG charts. Its Go benchmarks run with:

  cd bench && go test -run '^$' -bench . ./...
`

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), benchHelp) }
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "actorpool bench: unexpected argument %q\n%s", fs.Arg(0), benchHelp)
		return exitUsage
	}
	fmt.Fprint(stdout, benchHelp)
	return exitOK
}
