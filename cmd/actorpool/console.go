package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/actorpool/actorpool/cmd/actorpool/internal/console"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgpool"
)

const consoleHelp = `Usage: actorpool console --postgres URL [--schema NAME] [--listen ADDR] [--token TOKEN]

Console serves a web page on the durable actors (package pgactor) of one
schema: every actor with its counters and gauges, refreshed live, and a
chart of its depth over the last minutes; its tasks by state, key and time
enqueued, a page at a time; one task's payload, attempts, runs, last
error and times; the dead letters, to replay or delete; and a button to
pause or resume each actor. The binary embeds all it serves.

It listens on 127.0.0.1:8080 unless told otherwise. Every write action is
a POST from the console's own forms: requests that another site's page
makes a browser send are refused (403), and so, when the console has a
token, are requests without it. Listening on an address other than a
loopback one needs a token — --token, or better ACTORPOOL_CONSOLE_TOKEN,
which other users cannot read in the process list — of at least 16
characters; the console then asks for it at /login before it changes
anything.

Flags:
`

const consoleExamples = `
Examples:

  actorpool console --postgres 'postgres://app@db:5432/app?sslmode=disable'
  ACTORPOOL_CONSOLE_TOKEN=$(openssl rand -hex 16) \
    actorpool console --postgres "$DATABASE_URL" --schema jobs --listen :8080

Exit codes: 0 stopped by SIGINT or SIGTERM after a graceful shutdown;
1 the server cannot be reached, the schema is missing or newer than this
actorpool, or the address cannot be listened on; 2 usage error.
`

// Settings of the console command.
const (
	consoleTokenEnv       = "ACTORPOOL_CONSOLE_TOKEN"
	consoleDefaultListen  = "127.0.0.1:8080"
	consoleMinToken       = 16
	consoleConnectTimeout = 10 * time.Second
	consoleShutdown       = 10 * time.Second
)

// consoleFlags is the console's command line, checked.
type consoleFlags struct {
	pool   *pgpool.Config
	schema string
	listen string
	token  string
}

func runConsole(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, code := parseConsole(args, os.Getenv, stdout, stderr)
	if code >= 0 {
		return code
	}
	return serveConsole(ctx, f, stdout, stderr)
}

// parseConsole parses the console's command line; getenv reads the
// environment, for the token. It returns the exit code to stop with,
// having said why, or -1 to go on.
func parseConsole(args []string, getenv func(string) string, stdout, stderr io.Writer) (consoleFlags, int) {
	var f consoleFlags
	fs := flag.NewFlagSet("console", flag.ContinueOnError)
	dsn := fs.String("postgres", "", "the PostgreSQL database, as a `URL` (postgres://user@host:5432/db)")
	fs.StringVar(&f.schema, "schema", pgactor.DefaultSchema, "the `name` of the schema holding the actors' tables, as pgactor.Config.Schema")
	fs.StringVar(&f.listen, "listen", consoleDefaultListen, "serve the console at `host:port`; another than a loopback address needs a token")
	fs.StringVar(&f.token, "token", "", "the `token` that write actions need (default $"+consoleTokenEnv+")")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), consoleHelp)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), consoleExamples)
	}
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return f, code
	}
	usageErr := func(format string, args ...any) (consoleFlags, int) {
		fmt.Fprintf(stderr, "actorpool console: "+format+"\nRun 'actorpool help console' for its flags.\n", args...)
		return f, exitUsage
	}
	if f.token == "" {
		f.token = getenv(consoleTokenEnv)
	}
	switch {
	case fs.NArg() > 0:
		return usageErr("unexpected argument %q: the command takes flags only", fs.Arg(0))
	case *dsn == "":
		return usageErr("--postgres is required: name the database, such as postgres://app@127.0.0.1:5432/app")
	case f.schema == "":
		return usageErr("--schema is empty: name the schema of the actors' tables (default %q)", pgactor.DefaultSchema)
	}
	var err error
	if f.pool, err = pgpool.ParseConfig(*dsn); err != nil {
		return usageErr("--postgres: %v; write it as postgres://user@host:5432/dbname", err)
	}
	host, port, err := net.SplitHostPort(f.listen)
	if err != nil {
		return usageErr("--listen %q: %v; write it as host:port, such as %s", f.listen, err, consoleDefaultListen)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return usageErr("--listen %q: port %q is not a port number: use 1 to 65535, or 0 for any free port", f.listen, port)
	}
	switch {
	case f.token != "" && len(f.token) < consoleMinToken:
		return usageErr("the token is %d characters long: use one of at least %d, such as $(openssl rand -hex 16)", len(f.token), consoleMinToken)
	case f.token == "" && !loopback(host):
		return usageErr("--listen %q is not a loopback address, so write actions need a token: pass --token, or set %s, to one of at least %d characters; or listen on %s", f.listen, consoleTokenEnv, consoleMinToken, consoleDefaultListen)
	}
	return f, -1
}

// loopback reports whether host, of a listen address, is a loopback
// address or "localhost"; "" (every interface) is not.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveConsole serves the console that f describes until ctx ends, then
// shuts it down gracefully.
func serveConsole(ctx context.Context, f consoleFlags, stdout, stderr io.Writer) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "actorpool console: "+format+"\n", args...)
		return exitFailure
	}
	where := fmt.Sprintf("%s:%d/%s", f.pool.ConnConfig.Host, f.pool.ConnConfig.Port, f.pool.ConnConfig.Database)
	f.pool.MaxConns = 4
	// The failed connects are the command's to report, once.
	f.pool.Pool.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	pool, err := pgpool.NewWithConfig(ctx, f.pool)
	if err != nil {
		return fail("cannot make a pool for PostgreSQL at %s: %v", where, err)
	}
	defer pool.Close()
	cctx, cancel := context.WithTimeout(ctx, consoleConnectTimeout)
	err = pool.Ping(cctx)
	cancel()
	if err != nil {
		return fail("cannot connect to PostgreSQL at %s as %q: %v; is the server running, and is the URL right?", where, f.pool.ConnConfig.User, err)
	}
	cctx, cancel = context.WithTimeout(ctx, consoleConnectTimeout)
	admin, err := pgactor.NewAdmin(cctx, pool, f.schema)
	cancel()
	if err != nil {
		return fail("%v", err)
	}
	cctx, cancel = context.WithTimeout(ctx, consoleConnectTimeout)
	_, err = admin.Actors(cctx)
	cancel()
	if err != nil {
		return fail("schema %q at %s: %v", f.schema, where, err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	host, _, _ := net.SplitHostPort(f.listen)
	c, err := console.New(console.Postgres(admin), console.Options{Token: f.token, LoopbackOnly: loopback(host), Logger: logger})
	if err != nil {
		return fail("%v", err)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fail("cannot listen on %s: %v", f.listen, err)
	}
	srv := &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}

	sctx, stopSampling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { c.Run(sctx) })
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	auth := "write actions open to its own pages"
	if f.token != "" {
		auth = "write actions need the token: log in at /login"
	}
	fmt.Fprintf(stdout, "actorpool console: schema %q at %s, serving http://%s/ (%s); Ctrl-C to stop\n", f.schema, where, ln.Addr(), auth)

	code := exitOK
	select {
	case err := <-served:
		code = fail("serve http://%s/: %v", ln.Addr(), err)
	case <-ctx.Done():
		shctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), consoleShutdown)
		if err := srv.Shutdown(shctx); err != nil {
			code = fail("shut down: %v", err)
		}
		cancel()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			code = fail("serve http://%s/: %v", ln.Addr(), err)
		}
		fmt.Fprintln(stdout, "actorpool console: stopped")
	}
	stopSampling()
	wg.Wait()
	return code
}
