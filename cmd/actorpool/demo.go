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
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/term"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/config"
	"github.com/actorpool/actorpool/metrics"
)

const demoHelp = `Usage: actorpool demo [flags]

The demo pools connections to a server and puts them under load:

  - a server: an embedded Redis-protocol server (miniredis) on 127.0.0.1,
    or the Redis or PostgreSQL server named by --redis or --postgres;
  - a pool "demo" of --size connections to it, shared by --clients
    concurrent clients, each sending requests as fast as it can (or with
    --think between them): a Redis request reads a session, creates it if
    missing and counts a page view; a PostgreSQL request reads an account
    by its key;
  - an actor "audit" with --workers workers, to which each request sends an
    audit record; its workers write the records through a pool "audit" of
    their own, so that background work cannot starve requests.

Against PostgreSQL the audit actor is durable (package pgactor): its tasks
are rows in the schema --schema, migrated at start and kept between runs,
and each is written in the task's own transaction, once. Ctrl-C stops it
taking tasks and loses nothing: the running ones finish, the others stay in
the queue, and the next run finishes them, and says so.

With --jetstream the audit actor is durable on NATS JetStream (package
jsactor), in streams actorpool_demo_audit*, with the same promise: on an
embedded NATS server whose store is kept between runs (--jetstream-dir,
actorpool/jetstream in the user's cache directory by default), or, with
--jetstream=URL or --jetstream URL, on the NATS server at URL. The requests still go to the
embedded Redis server, or to --redis. The streams stay; remove them with
'nats stream rm', or remove the embedded server's directory.

While it runs it shows the pool's connections in use, idle and waited for,
requests per second, the wait for a connection (p50, p99), and the audit
tasks queued and done: redrawn in place on a terminal, a line a second
otherwise. At the end, or on Ctrl-C, it closes the actor (letting it drain
its queue; a durable one drains only at the end) and the pools, then prints
a summary and a latency histogram.

Against a real server the demo writes under names of its own and removes
them at the end: Redis keys actorpool-demo:<run>:*, a PostgreSQL schema
actorpool_demo_<run>. The durable actor's schema stays; remove it with
DROP SCHEMA pgactor_demo CASCADE.

Flags:
`

const demoExamples = `
Examples:

  actorpool demo
  actorpool demo --clients 64 --size 4 --duration 30s --chart run.svg
  actorpool demo --redis 127.0.0.1:6379 --metrics 127.0.0.1:9090
  actorpool demo --postgres 'postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
  actorpool demo --jetstream --metrics 127.0.0.1:9090
  actorpool demo --jetstream=nats://127.0.0.1:4222
  actorpool demo --config examples/actorpool.yaml

With --config, the demo takes the pool "demo" and the actor "audit" from the
file, and the pool "audit" if there is one; flags given on the command line
override the file. A durable actor takes all the actor's settings but the
mailbox's (capacity, overflow, dead_letter_rejected); on JetStream, a fixed
number of workers only (not min_workers, max_workers, keep_alive).

Exit codes: 0 the run completed; 1 it could not start (a server that cannot
be reached, a bad configuration) or more than 1% of its requests failed;
2 usage error; 130 stopped by Ctrl-C (the summary is still printed).
`

// demoFlags are the demo's settings.
type demoFlags struct {
	clients    int
	duration   time.Duration
	size       int
	workers    int
	think      time.Duration
	redis      string
	postgres   string
	schema     string
	jetstream  jetstreamFlag
	jsDir      string
	metrics    string
	configPath string
	chart      string
	progress   string
	set        map[string]bool // flags given on the command line
}

func runDemo(ctx context.Context, stop func(), args []string, stdout, stderr io.Writer) int {
	f, code := parseDemo(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	return demo(ctx, stop, f, stdout, stderr)
}

// parseDemo parses the demo's command line. It returns the exit code to
// stop with, having said why, or -1 to run the demo with the flags.
func parseDemo(args []string, stdout, stderr io.Writer) (demoFlags, int) {
	var f demoFlags
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.IntVar(&f.clients, "clients", 32, "concurrent `clients` sending requests")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "how long to run, such as 30s or 2m")
	fs.IntVar(&f.size, "size", 8, "connections in the request pool (its MaxObjects)")
	fs.IntVar(&f.workers, "workers", 8, "workers of the audit actor, and connections of its pool")
	fs.DurationVar(&f.think, "think", 0, "mean pause of a client between requests, such as 1ms (0: none)")
	fs.StringVar(&f.redis, "redis", "", "load the Redis server at `host:port` instead of the embedded one")
	fs.StringVar(&f.postgres, "postgres", "", "load the PostgreSQL server at `DSN` (postgres://user@host:5432/db), with a durable audit actor")
	fs.StringVar(&f.schema, "schema", defaultDemoSchema, "with --postgres, the `schema` of the durable audit actor's tables")
	fs.Var(&f.jetstream, "jetstream", "run the audit actor durable on NATS JetStream: alone, on an embedded server;\nwith a URL (--jetstream=nats://host:4222, or after a space), on that server")
	fs.StringVar(&f.jsDir, "jetstream-dir", "", "with --jetstream alone, the `directory` of the embedded server's store, kept between runs\n(default: actorpool/jetstream in the user's cache directory)")
	fs.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics at http://`ADDR`/metrics while running, such as 127.0.0.1:9090")
	fs.StringVar(&f.configPath, "config", "", "take the pools' and the actor's settings from `FILE` (YAML)")
	fs.StringVar(&f.chart, "chart", "", "write a chart of the run to `FILE` (.svg, .png or .pdf)")
	fs.StringVar(&f.progress, "progress", "auto", "how to show progress: live, lines, off, or auto (live on a terminal)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), demoHelp)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), demoExamples)
	}
	if code := parseJetStreamFlags(fs, &f.jetstream, args, stdout, stderr); code >= 0 {
		return f, code
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if err := f.check(fs); err != nil {
		fmt.Fprintf(stderr, "actorpool demo: %v\nRun 'actorpool help demo' for its flags.\n", err)
		return f, exitUsage
	}
	if f.progress == "auto" {
		f.progress = progressLines
		if isTerminal(stdout) {
			f.progress = progressLive
		}
	}
	return f, -1
}

// check rejects flags that cannot work together or have no sense.
func (f *demoFlags) check(fs *flag.FlagSet) error {
	switch {
	case f.jetstream.check() != nil:
		return f.jetstream.check()
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q: the demo takes flags only", fs.Arg(0))
	case f.clients < 1:
		return fmt.Errorf("--clients %d: there must be at least 1 client", f.clients)
	case f.clients > maxClients:
		return fmt.Errorf("--clients %d: must be between 1 and %d", f.clients, maxClients)
	case f.duration <= 0:
		return fmt.Errorf("--duration %v: must be more than 0, such as 10s", f.duration)
	case f.size < 1 || f.size > actorpool.MaxObjectsLimit:
		return fmt.Errorf("--size %d: must be between 1 and %d", f.size, actorpool.MaxObjectsLimit)
	case f.workers < 1:
		return fmt.Errorf("--workers %d: the actor needs at least 1 worker", f.workers)
	case f.workers > f.maxWorkers():
		return fmt.Errorf("--workers %d: must be between 1 and %d", f.workers, f.maxWorkers())
	case f.think < 0:
		return fmt.Errorf("--think %v: must not be negative", f.think)
	case f.redis != "" && f.postgres != "":
		return errors.New("--redis and --postgres: choose one server")
	case f.jetstream.on && f.postgres != "":
		return errors.New("--jetstream and --postgres: the audit actor is durable on one of them; choose one")
	case f.set["schema"] && f.postgres == "":
		return errors.New("--schema: the durable audit actor needs --postgres")
	case checkSchemaFlag(f.schema) != nil:
		return checkSchemaFlag(f.schema)
	case f.set["jetstream-dir"] && (!f.jetstream.on || f.jetstream.url != ""):
		return errors.New("--jetstream-dir: the store of the embedded server, which only --jetstream alone starts")
	case f.progress != "auto" && f.progress != progressLive && f.progress != progressLines && f.progress != progressOff:
		return fmt.Errorf("--progress %q: must be live, lines, off or auto", f.progress)
	}
	if f.chart != "" {
		return checkChartPath(f.chart)
	}
	return nil
}

// maxClients bounds --clients: each client is a goroutine, all started
// at once, and a million of them start in seconds.
const maxClients = 1 << 20

// maxWorkers is the most workers the audit actor can have: as many as an
// actor takes, with a connection each (and durableExtraConns more against
// PostgreSQL) in a pool of at most actorpool.MaxObjectsLimit.
func (f *demoFlags) maxWorkers() int {
	return min(actor.WorkersLimit, actorpool.MaxObjectsLimit-f.auditConns(0))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func terminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil {
			return width
		}
	}
	return 80
}

// settings are the pools' and the actor's configurations.
type settings struct {
	reqPool, auditPool actorpool.Config
	audit              config.Actor
}

// settingsFor returns the demo's defaults, or the file's settings, with
// the flags given on the command line over them.
func settingsFor(f demoFlags) (settings, error) {
	s := settings{
		reqPool: actorpool.Config{
			Name: "demo", MaxObjects: f.size, MinIdle: min(2, f.size),
			MaxIdleTime: time.Minute, CreateTimeout: 5 * time.Second, ValidationInterval: 30 * time.Second,
		},
		auditPool: actorpool.Config{Name: "audit", MaxObjects: f.auditConns(f.workers), CreateTimeout: 5 * time.Second},
		audit: config.Actor{
			Name: "audit", Workers: f.workers, Capacity: 1000, MaxAttempts: 3,
			Backoff: actor.Backoff{Initial: 10 * time.Millisecond, Max: time.Second, Jitter: 0.2},
			Timeout: 2 * time.Second,
		},
	}
	if f.configPath == "" {
		return s, nil
	}
	file, err := config.Load(f.configPath)
	if err != nil {
		return s, err
	}
	p, ok := file.Pool("demo")
	if !ok {
		return s, fmt.Errorf("%s declares no pool named \"demo\": the demo takes the settings of its request pool from pools.demo", f.configPath)
	}
	a, ok := file.Actor("audit")
	if !ok {
		return s, fmt.Errorf("%s declares no actor named \"audit\": the demo takes the settings of its actor from actors.audit", f.configPath)
	}
	s.reqPool, s.audit = p.Config, a
	if f.set["size"] {
		s.reqPool.MaxObjects = f.size
		s.reqPool.MinIdle = min(s.reqPool.MinIdle, f.size)
	}
	if f.set["workers"] {
		s.audit.Workers, s.audit.MinWorkers, s.audit.MaxWorkers, s.audit.KeepAlive = f.workers, 0, 0, 0
	}
	if f.jetstream.on {
		// Placed in the file, as its own problems are: JetStream's rules
		// are not those of an actor entry.
		if _, err := jetstreamConfig(s.audit); err != nil {
			return s, file.ActorProblems(s.audit.Name, err)
		}
	}
	workers := max(s.audit.Workers, s.audit.MaxWorkers, 1)
	if ap, ok := file.Pool("audit"); ok {
		s.auditPool = ap.Config
	} else {
		s.auditPool.MaxObjects = f.auditConns(workers)
	}
	return s, nil
}

// auditConns returns the size of the audit actor's pool for its number
// of workers: one each, and durableExtraConns more for a durable actor.
func (f *demoFlags) auditConns(workers int) int {
	if f.postgres != "" {
		return workers + durableExtraConns
	}
	return workers
}

// demo runs the demo and returns the exit code.
func demo(ctx context.Context, stopSignals func(), f demoFlags, stdout, stderr io.Writer) int {
	s, err := settingsFor(f)
	if err != nil {
		fmt.Fprintf(stderr, "actorpool demo: %v\n", err)
		return exitFailure
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m := metrics.NewCollector(metrics.Options{})
	s.reqPool.Logger, s.reqPool.Observer = logger, m.PoolObserver(s.reqPool.Name)
	s.auditPool.Logger, s.auditPool.Observer = logger, m.PoolObserver(s.auditPool.Name)
	if s.reqPool.Name == s.auditPool.Name {
		return failf(stderr, "the request pool and the audit pool are both named %q; name them apart", s.reqPool.Name)
	}

	var b backend
	var pg *postgresBackend // against PostgreSQL, where the audit actor is durable
	switch {
	case f.postgres != "":
		if pg, err = newPostgresBackend(ctx, f.postgres, s.reqPool, s.auditPool); err == nil {
			b = pg
		}
	default:
		b, err = newRedisBackend(ctx, f.redis, s.reqPool, s.auditPool)
	}
	if err != nil {
		return failf(stderr, "%v", err)
	}
	m.AddPool(s.reqPool.Name, func() actorpool.Stats { st, _ := b.stats(); return st })
	m.AddPool(s.auditPool.Name, func() actorpool.Stats { _, st := b.stats(); return st })

	handle := metrics.InstrumentHandler(m.ActorObserver(s.audit.Name), func(ctx context.Context, t actor.Task[auditEvent]) error {
		return b.audit(ctx, t.Payload)
	})
	audit, durableMetrics, err := startAudit(ctx, f, s.audit, pg, handle, logger, m)
	if err != nil {
		b.close(context.Background())
		return failf(stderr, "%v", err)
	}
	durable, _ := audit.(durableActor)

	var srv *http.Server
	if f.metrics != "" {
		exported := []prometheus.Collector{m}
		if durableMetrics != nil {
			exported = append(exported, durableMetrics)
		}
		srv, err = serveMetrics(f.metrics, stdout, stderr, exported...)
		if err != nil {
			stopped, cancel := context.WithCancel(context.Background())
			cancel()
			audit.close(stopped, true)
			b.close(context.Background())
			return failf(stderr, "%v", err)
		}
	}

	fmt.Fprintf(stdout, "actorpool demo: %d clients for %s against %s\n", f.clients, fmtSeconds(f.duration), b.describe())
	if s := b.scratch(); s != "" {
		fmt.Fprintf(stdout, "  writes %s, removed at the end\n", s)
	}
	fmt.Fprintf(stdout, "  pool %q: %d connections for requests; actor %q: %s writing audit records through pool %q (%d)\n",
		s.reqPool.Name, s.reqPool.MaxObjects, s.audit.Name, workersOf(s.audit), s.auditPool.Name, s.auditPool.MaxObjects)
	if durable != nil {
		fmt.Fprint(stdout, durable.header())
	}
	if f.progress == progressLive {
		fmt.Fprint(stdout, "  Ctrl-C stops the run and still prints the summary\n")
	}
	fmt.Fprintln(stdout)

	// The run: clients and the monitor until the duration passes or a
	// signal comes.
	runCtx, cancel := context.WithTimeout(ctx, f.duration)
	defer cancel()
	l := &load{}
	mon := &monitor{load: l, b: b, audit: audit, mode: f.progress, out: stdout, width: terminalWidth(stdout), duration: f.duration}
	start := now()
	var wg sync.WaitGroup
	for i := range f.clients {
		wg.Go(func() { l.client(runCtx, i, b, audit, f.think) })
	}
	mon.watch(runCtx)
	wg.Wait()
	elapsed := now().Sub(start)
	interrupted := ctx.Err() != nil
	stopSignals() // a second Ctrl-C now kills the process

	// Shut down: drain the actor, then close the pools, each with a bound.
	res := &result{server: b.describe(), clients: f.clients, elapsed: elapsed, interrupted: interrupted, load: l,
		reqName: s.reqPool.Name, auditName: s.auditPool.Name, actorName: s.audit.Name}
	switch {
	case interrupted && f.progress != progressOff && durable != nil:
		fmt.Fprintf(stdout, "\nstopping: closing the audit actor, whose queue stays in %s for the next run, and the pools (Ctrl-C again to quit at once)\n", durable.store())
	case interrupted && f.progress != progressOff:
		fmt.Fprintln(stdout, "\nstopping: draining the audit actor, closing the pools (Ctrl-C again to quit at once)")
	}
	var shutdown []error
	dctx, dcancel := context.WithTimeout(context.Background(), drainTimeout)
	if err := audit.close(dctx, interrupted); err != nil {
		shutdown = append(shutdown, err)
	}
	dcancel()
	res.tasks = audit.stats()
	if durable != nil {
		res.actorNote = durable.footer()
	}
	cctx, ccancel := context.WithTimeout(context.Background(), closeTimeout)
	if err := b.close(cctx); err != nil {
		shutdown = append(shutdown, err)
	}
	ccancel()
	res.reqPool, res.auditPool = b.stats()
	res.shutdownErr = errors.Join(shutdown...)
	if srv != nil {
		sctx, scancel := context.WithTimeout(context.Background(), time.Second)
		srv.Shutdown(sctx)
		scancel()
	}

	res.print(stdout)
	if f.chart != "" {
		title := fmt.Sprintf("actorpool demo: %d clients, %d connections, %s", f.clients, s.reqPool.MaxObjects, b.describe())
		if err := writeChart(f.chart, title, mon.samples); err != nil {
			fmt.Fprintf(stderr, "actorpool demo: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "\nchart: %s\n", f.chart)
	}

	switch {
	case interrupted:
		return exitInterrupted
	case l.requests.Load() == 0:
		fmt.Fprintln(stderr, "actorpool demo: no request succeeded; see the errors above")
		return exitFailure
	case l.failed.Load()*100 > l.requests.Load():
		fmt.Fprintf(stderr, "actorpool demo: %s of %s requests failed, more than 1%%; see the errors above\n",
			fmtInt(l.failed.Load()), fmtInt(l.failed.Load()+l.requests.Load()))
		return exitFailure
	}
	return exitOK
}

// Bounds on the shutdown: the actor's drain, then the pools' close.
const (
	drainTimeout = 10 * time.Second
	closeTimeout = 5 * time.Second
)

func workersOf(a config.Actor) string {
	if a.MaxWorkers > 0 {
		return fmt.Sprintf("%d to %d workers", a.MinWorkers, a.MaxWorkers)
	}
	return plural(max(a.Workers, 1), "worker")
}

func failf(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "actorpool demo: "+format+"\n", args...)
	return exitFailure
}

// serveMetrics serves the collectors, with the Go runtime's and the
// process's metrics, at addr until the server is shut down.
func serveMetrics(addr string, stdout, stderr io.Writer, cs ...prometheus.Collector) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics %s: %w; choose a free address, such as 127.0.0.1:0", addr, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(append(cs, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))...)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(slog.NewTextHandler(stderr, nil), slog.LevelError)}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "actorpool demo: metrics server: %v\n", err)
		}
	}()
	fmt.Fprintf(stdout, "metrics: http://%s/metrics\n", ln.Addr())
	return srv, nil
}
