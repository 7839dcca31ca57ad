package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/config"
	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/pgactor"
)

// demoPrefix names the streams of the durable audit actor on JetStream: a
// prefix of the demo's own, apart from jsactor's default, so that the
// demo's actor cannot mix with an application's on a shared server.
const demoPrefix = "actorpool_demo"

// A jetstreamFlag is --jetstream: a flag that, like a bool one, may be
// given alone, which means an embedded server, or with a URL, as
// --jetstream=URL or --jetstream URL. Go's flag package takes the value
// of a flag whose IsBoolFlag is true only after '=', so that
// "--jetstream URL" leaves URL as an argument: parseJetStreamFlags takes
// it.
type jetstreamFlag struct {
	on    bool
	url   string // "" for the embedded server
	blank bool   // given as --jetstream=, with no URL
}

func (j *jetstreamFlag) String() string {
	if j == nil || !j.on {
		return ""
	}
	if j.url == "" {
		return "embedded"
	}
	return j.url
}

// Set takes any value: check refuses one that is not a URL, in words of
// its own, where the flag package would call it an invalid boolean.
func (j *jetstreamFlag) Set(s string) error {
	switch s {
	case "true":
		j.on, j.url, j.blank = true, "", false
	case "false":
		j.on, j.url, j.blank = false, "", false
	default:
		j.on, j.url, j.blank = true, s, s == ""
	}
	return nil
}

// check returns what is wrong with the URL, if anything.
func (j *jetstreamFlag) check() error {
	switch {
	case j.blank:
		return errors.New("--jetstream=: no URL after '=': write --jetstream alone for the embedded server, or --jetstream=nats://host:4222")
	case !j.on || j.url == "" || strings.Contains(j.url, "://"):
		return nil
	}
	return fmt.Errorf("--jetstream=%s: not a URL: write --jetstream alone for the embedded server, or --jetstream=nats://host:4222", j.url)
}

// IsBoolFlag lets --jetstream stand alone.
func (j *jetstreamFlag) IsBoolFlag() bool { return true }

// parseJetStreamFlags parses args with fs as parseFlags does, taking a
// URL written after --jetstream with a space — the form
// "--jetstream nats://host:4222", which the flag package leaves as the
// first argument — as j's value, then the flags after it.
func parseJetStreamFlags(fs *flag.FlagSet, j *jetstreamFlag, args []string, stdout, stderr io.Writer) int {
	code := parseFlags(fs, args, stdout, stderr)
	for code < 0 && j.on && j.url == "" && fs.NArg() > 0 && strings.Contains(fs.Arg(0), "://") {
		j.url = fs.Arg(0)
		code = parseFlags(fs, fs.Args()[1:], stdout, stderr)
	}
	return code
}

// defaultJetStreamDir is where the embedded server stores its streams
// unless --jetstream-dir names another: a directory of the user's cache
// that outlives the run, so that the next run finds the tasks this one
// left.
func defaultJetStreamDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no directory for the embedded JetStream server's store: %w; name one with --jetstream-dir", err)
	}
	return filepath.Join(cache, "actorpool", "jetstream"), nil
}

// jetstreamConfig maps the file's or the flags' settings onto a
// jsactor.Config, and checks it by jsactor's rules: those of an actor
// entry, with JetStream's own, and a fixed number of workers, as jsactor
// has no elastic actor. The mailbox's settings (capacity, overflow,
// dead_letter_rejected) have no meaning for a durable queue and are left
// out, as they are for pgactor.
func jetstreamConfig(a config.Actor) (jsactor.Config[auditEvent], error) {
	cfg := jsactor.Config[auditEvent]{
		Workers: a.Workers, MaxAttempts: a.MaxAttempts, Backoff: a.Backoff, Timeout: a.Timeout, Grace: a.Grace,
		Lease: a.Lease, Heartbeat: a.Heartbeat,
	}
	var errs []error
	const fixed = "must not be set on JetStream, whose actor runs a fixed number of workers: set workers"
	if a.MinWorkers != 0 {
		errs = append(errs, &actorpool.ConfigError{Field: "MinWorkers", Value: a.MinWorkers, Rule: fixed})
	}
	if a.MaxWorkers != 0 {
		errs = append(errs, &actorpool.ConfigError{Field: "MaxWorkers", Value: a.MaxWorkers, Rule: fixed})
	}
	if a.KeepAlive != 0 {
		errs = append(errs, &actorpool.ConfigError{Field: "KeepAlive", Value: a.KeepAlive, Rule: fixed})
	}
	return cfg, errors.Join(append(errs, cfg.Validate())...)
}

// jsQueue keeps a durable audit actor's tasks in JetStream: messages in
// streams that outlive the run, on an embedded server whose store is a
// directory kept between runs, or on the NATS server of a URL.
type jsQueue struct {
	a      *jsactor.Actor[auditEvent]
	nc     *nats.Conn
	server *embeddedJetStream // nil for a NATS of the user's
}

// newJetStreamAudit connects to the NATS server at url, or starts an
// embedded one storing in dir when url is "", reads what earlier runs
// left, and starts the actor with cfg's settings; dir "" is
// defaultJetStreamDir. It returns the jsactor.Actor too, for the metrics.
func newJetStreamAudit(ctx context.Context, url, dir string, cfg config.Actor, handle actor.Handler[auditEvent], logger *slog.Logger) (_ *durableAudit, _ *jsactor.Actor[auditEvent], err error) {
	jcfg, err := jetstreamConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("the audit actor's settings do not suit JetStream: %w", err)
	}
	jcfg.Prefix, jcfg.Logger = demoPrefix, logger
	jcfg.OnError = func(*actor.TaskError) {} // counted in Stats, summed up at the end

	q := &jsQueue{}
	defer func() {
		if err != nil {
			q.release()
		}
	}()
	var where string // the server, for the header and the errors
	if url == "" {
		if q.server, err = startEmbeddedJetStream(dir, "demo"); err != nil {
			return nil, nil, err
		}
		url, where = q.server.url(), q.server.describe()
	} else {
		where = "NATS at " + redactURLs(url)
	}
	q.nc, err = nats.Connect(url, nats.Name("actorpool demo"), nats.Timeout(pingTimeout))
	if err != nil {
		return nil, nil, fmt.Errorf("cannot reach %s: %w; is the server running? Write --jetstream alone to use an embedded one", where, err)
	}
	rctx, cancel := context.WithTimeout(ctx, pingTimeout)
	start, err := jsactor.ReadStats(rctx, q.nc, demoPrefix, cfg.Name)
	cancel()
	if err != nil && !errors.Is(err, jsactor.ErrUnknownActor) {
		return nil, nil, fmt.Errorf("cannot set up the durable audit actor on %s: %w; does the server run JetStream?", where, err)
	}
	nctx, cancel := context.WithTimeout(ctx, pingTimeout)
	q.a, err = jsactor.New(nctx, q.nc, cfg.Name, handle, jcfg)
	cancel()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot set up the durable audit actor on %s: %w", where, err)
	}
	work, _, _ := q.a.Streams()
	d := &durableAudit{
		q: q, kind: "JetStream", name: q.a.Name(), place: "stream " + work,
		intro: fmt.Sprintf("  actor %q is durable: its queue is in stream %s on %s, kept between runs\n", q.a.Name(), work, where),
		// The gauges are read one after another, so that a task moving
		// between subjects can be missed by one read: the queue counts as
		// empty when two reads a poll apart find it so.
		settle: 2,
		start:  pgactor.Stats(start),
	}
	return d, q.a, nil
}

// redactURLs returns the comma-separated server URLs of urls, as
// nats.Connect takes them, with their passwords and tokens masked, to be
// shown.
func redactURLs(urls string) string {
	list := strings.Split(urls, ",")
	for i, s := range list {
		if u, err := neturl.Parse(strings.TrimSpace(s)); err == nil {
			if _, ok := u.User.Password(); u.User != nil && !ok {
				u.User = neturl.User("xxxxx") // a user alone is a token to NATS
			}
			list[i] = u.Redacted()
		}
	}
	return strings.Join(list, ",")
}

func (q *jsQueue) put(ctx context.Context, e auditEvent) error {
	_, err := q.a.Send(ctx, e)
	return err
}

func (q *jsQueue) read(ctx context.Context) (pgactor.Stats, error) {
	s, err := q.a.Stats(ctx)
	return pgactor.Stats(s), err
}

// stop closes the actor, which gives the tasks it still holds back to the
// stream and adds its counters to the server.
func (q *jsQueue) stop(ctx context.Context) error { return q.a.Close(ctx) }

// release closes the connection and stops the embedded server, if any.
func (q *jsQueue) release() {
	if q.nc != nil {
		q.nc.Close()
	}
	if q.server != nil {
		q.server.shutdown()
	}
}

// jsLeft is how many of the actor's tasks s says are still to run.
func jsLeft(s jsactor.Stats) int { return left(pgactor.Stats(s)) }
