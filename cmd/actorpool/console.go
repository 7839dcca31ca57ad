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

	"github.com/nats-io/nats.go"

	"github.com/actorpool/actorpool/cmd/actorpool/internal/console"
	"github.com/actorpool/actorpool/cmd/actorpool/internal/console/jsconsole"
	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgpool"
)

const consoleHelp = `Usage: actorpool console --postgres URL [--schema NAME] [--listen ADDR] [--token TOKEN]
       actorpool console --jetstream[=URL] [--jetstream-dir DIR] [--prefix NAME] [--listen ADDR] [--token TOKEN]

Console serves a web page on durable actors: those of one schema in
PostgreSQL (package pgactor), with --postgres, or those under one prefix
on NATS JetStream (package jsactor), with --jetstream. It shows every
actor with its counters and gauges, refreshed live, and a chart of its
depth over the last minutes; its tasks by state, key and time enqueued,
a page at a time; one task's payload, attempts, last error and times;
the dead letters, to replay or delete; and a button to pause or resume
each actor. The binary embeds all it serves.

--jetstream alone opens the store of the embedded NATS server that
'actorpool demo --jetstream' keeps (--jetstream-dir, actorpool/jetstream
in the user's cache directory by default), and the demo's prefix,
actorpool_demo: while a demo runs that server, the console connects to
it; otherwise it starts the server on the store itself, and a demo
started meanwhile is told the console's URL. --jetstream=URL connects to
the NATS server at URL (--jetstream URL too), and the prefix is jsactor's
default, actorpool. On JetStream, a live task is named by its
actor and its sequence in the actor's stream (mail:42), which changes
when the task is retried or comes due, and a dead letter by its actor
and its own ID (mail:dead:7); JetStream has no canceling state.

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
  actorpool console --jetstream
  actorpool console --jetstream=nats://127.0.0.1:4222 --prefix orders

Exit codes: 0 stopped by SIGINT or SIGTERM after a graceful shutdown;
1 the server cannot be reached, the schema is missing or newer than this
actorpool, the embedded server's store cannot be opened, or the address
cannot be listened on; 2 usage error.
`

// Settings of the console command.
const (
	consoleTokenEnv       = "ACTORPOOL_CONSOLE_TOKEN"
	consoleDefaultListen  = "127.0.0.1:8080"
	consoleMinToken       = 16
	consoleConnectTimeout = 10 * time.Second
	consoleShutdown       = 10 * time.Second
)

// consoleFlags is the console's command line, checked: pool is set for
// PostgreSQL, jetstream.on for JetStream.
type consoleFlags struct {
	pool      *pgpool.Config
	schema    string
	jetstream jetstreamFlag
	jsDir     string
	prefix    string // "" for the default of the server jetstream names
	listen    string
	token     string
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
	fs.StringVar(&f.schema, "schema", pgactor.DefaultSchema, "with --postgres, the `name` of the schema holding the actors' tables, as pgactor.Config.Schema")
	fs.Var(&f.jetstream, "jetstream", "the actors on NATS JetStream: alone, on the demo's embedded server;\nwith a URL (--jetstream=nats://host:4222, or after a space), on that server")
	fs.StringVar(&f.jsDir, "jetstream-dir", "", "with --jetstream alone, the `directory` of the embedded server's store\n(default: actorpool/jetstream in the user's cache directory, as the demo's)")
	fs.StringVar(&f.prefix, "prefix", "", "with --jetstream, the `prefix` of the actors' streams, as jsactor.Config.Prefix\n(default: "+demoPrefix+" on the embedded server, "+jsactor.DefaultPrefix+" on a URL's)")
	fs.StringVar(&f.listen, "listen", consoleDefaultListen, "serve the console at `host:port`; another than a loopback address needs a token")
	fs.StringVar(&f.token, "token", "", "the `token` that write actions need (default $"+consoleTokenEnv+")")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), consoleHelp)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), consoleExamples)
	}
	if code := parseJetStreamFlags(fs, &f.jetstream, args, stdout, stderr); code >= 0 {
		return f, code
	}
	usageErr := func(format string, args ...any) (consoleFlags, int) {
		fmt.Fprintf(stderr, "actorpool console: "+format+"\nRun 'actorpool help console' for its flags.\n", args...)
		return f, exitUsage
	}
	if f.token == "" {
		f.token = getenv(consoleTokenEnv)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	switch {
	case f.jetstream.check() != nil:
		return usageErr("%v", f.jetstream.check())
	case fs.NArg() > 0:
		return usageErr("unexpected argument %q: the command takes flags only", fs.Arg(0))
	case f.jetstream.on && *dsn != "":
		return usageErr("--jetstream and --postgres: the console serves the actors of one of them; choose one")
	case !f.jetstream.on && *dsn == "":
		return usageErr("--postgres or --jetstream is required: name the database, such as --postgres postgres://app@127.0.0.1:5432/app, or the NATS server, such as --jetstream=nats://127.0.0.1:4222 (--jetstream alone for the demo's embedded one)")
	case set["schema"] && *dsn == "":
		return usageErr("--schema: the schema of the actors' tables in PostgreSQL, which needs --postgres; on JetStream, name a --prefix")
	case f.schema == "":
		return usageErr("--schema is empty: name the schema of the actors' tables (default %q)", pgactor.DefaultSchema)
	case checkSchemaFlag(f.schema) != nil:
		return usageErr("%v", checkSchemaFlag(f.schema))
	case set["prefix"] && !f.jetstream.on:
		return usageErr("--prefix: the prefix of the actors' streams on JetStream, which needs --jetstream; in PostgreSQL, name a --schema")
	case set["prefix"] && f.prefix == "":
		return usageErr("--prefix is empty: name the prefix of the actors' streams, or leave the flag out for the default")
	case set["prefix"] && jsactor.Config[struct{}]{Prefix: f.prefix}.Validate() != nil:
		// Config's rule for a prefix is the one the Admin keeps.
		return usageErr("--prefix %q: %v", f.prefix, jsactor.Config[struct{}]{Prefix: f.prefix}.Validate())
	case set["jetstream-dir"] && (!f.jetstream.on || f.jetstream.url != ""):
		return usageErr("--jetstream-dir: the store of the embedded server, which only --jetstream alone opens")
	case set["jetstream-dir"] && f.jsDir == "":
		return usageErr("--jetstream-dir is empty: name the store's directory, or leave the flag out for the demo's")
	}
	if f.jetstream.on {
		if f.prefix == "" {
			f.prefix = jsactor.DefaultPrefix
			if f.jetstream.url == "" {
				f.prefix = demoPrefix
			}
		}
	} else {
		var err error
		if f.pool, err = pgpool.ParseConfig(*dsn); err != nil {
			return usageErr("--postgres: %v; write it as postgres://user@host:5432/dbname", err)
		}
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
	open := openPostgresConsole
	if f.jetstream.on {
		open = openJetStreamConsole
	}
	admin, where, closeAdmin, err := open(ctx, f, stderr)
	if err != nil {
		return fail("%v", err)
	}
	defer closeAdmin()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	host, _, _ := net.SplitHostPort(f.listen)
	c, err := console.New(admin, console.Options{Token: f.token, LoopbackOnly: loopback(host), Logger: logger})
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
	fmt.Fprintf(stdout, "actorpool console: %s, serving http://%s/ (%s); Ctrl-C to stop\n", where, ln.Addr(), auth)

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

// openPostgresConsole connects to the database f names, checks its
// schema, and returns the console's Admin over it, where it is, to be
// shown, and what closes it.
func openPostgresConsole(ctx context.Context, f consoleFlags, stderr io.Writer) (console.Admin, string, func(), error) {
	where := fmt.Sprintf("%s:%d/%s", f.pool.ConnConfig.Host, f.pool.ConnConfig.Port, f.pool.ConnConfig.Database)
	f.pool.MaxConns = 4
	// The failed connects are the command's to report, once.
	f.pool.Pool.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	pool, err := pgpool.NewWithConfig(ctx, f.pool)
	if err != nil {
		return nil, "", nil, fmt.Errorf("cannot make a pool for PostgreSQL at %s: %w", where, err)
	}
	cctx, cancel := context.WithTimeout(ctx, consoleConnectTimeout)
	defer cancel()
	if err := pool.Ping(cctx); err != nil {
		pool.Close()
		return nil, "", nil, fmt.Errorf("cannot connect to PostgreSQL at %s as %q: %w; is the server running, and is the URL right?", where, f.pool.ConnConfig.User, err)
	}
	admin, err := pgactor.NewAdmin(cctx, pool, f.schema)
	if err != nil {
		pool.Close()
		return nil, "", nil, err
	}
	if _, err := admin.Actors(cctx); err != nil {
		pool.Close()
		return nil, "", nil, fmt.Errorf("schema %q at %s: %w", f.schema, where, err)
	}
	return console.Postgres(admin), fmt.Sprintf("schema %q at %s", f.schema, where), pool.Close, nil
}

// openJetStreamConsole connects to the NATS server f names — for
// --jetstream alone, the demo's embedded server: the one a demo runs on
// the store now, or one it starts on the store itself — and returns the
// console's Admin over the actors under f.prefix, where they are, to be
// shown, and what closes it.
func openJetStreamConsole(ctx context.Context, f consoleFlags, _ io.Writer) (_ console.Admin, _ string, _ func(), err error) {
	url, where := f.jetstream.url, "NATS at "+redactURLs(f.jetstream.url)
	var embedded *embeddedJetStream
	if url == "" {
		embedded, err = startEmbeddedJetStream(f.jsDir, "console")
		var busy *storeBusyError
		switch {
		case errors.As(err, &busy) && busy.holder.URL != "":
			// Another process runs the server on the store: the console
			// is one more client of it.
			url, where = busy.holder.URL, fmt.Sprintf("the embedded NATS server of actorpool %s (pid %d) at %s, stored in %s", busy.holder.Command, busy.holder.PID, busy.holder.URL, busy.dir)
		case err != nil:
			return nil, "", nil, err
		default:
			url, where = embedded.url(), embedded.describe()
		}
	}
	closeAll := func() {
		if embedded != nil {
			embedded.shutdown()
		}
	}
	nc, err := nats.Connect(url, nats.Name("actorpool console"), nats.Timeout(consoleConnectTimeout))
	if err != nil {
		closeAll()
		return nil, "", nil, fmt.Errorf("cannot reach %s: %w; is the server running? Write --jetstream alone for the demo's embedded one", where, err)
	}
	closeAll = func() {
		nc.Close()
		if embedded != nil {
			embedded.shutdown()
		}
	}
	admin, err := jsactor.NewAdmin(nc, f.prefix)
	if err != nil {
		closeAll()
		return nil, "", nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, consoleConnectTimeout)
	defer cancel()
	if _, err := admin.Actors(cctx); err != nil {
		closeAll()
		return nil, "", nil, fmt.Errorf("prefix %q on %s: %w; does the server run JetStream?", f.prefix, where, err)
	}
	return jsconsole.New(admin), fmt.Sprintf("prefix %q on %s", f.prefix, where), closeAll, nil
}
