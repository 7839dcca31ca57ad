package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/config"
	"github.com/actorpool/actorpool/jsactor"
)

// demoPrefix names the streams of the durable audit actor on JetStream: a
// prefix of the demo's own, apart from jsactor's default, so that the
// demo's actor cannot mix with an application's on a shared server.
const demoPrefix = "actorpool_demo"

// A jetstreamFlag is --jetstream: a flag that, like a bool one, may be
// given alone, which means an embedded server, or as --jetstream=URL.
// Go's flag package takes the value of a flag whose IsBoolFlag is true
// only after '=', so that "--jetstream URL" leaves URL as an argument,
// which check points out.
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

// jetstreamAudit is the audit actor on jsactor: its tasks are messages in
// streams that outlive the run, on an embedded server whose store is a
// directory kept between runs, or on the NATS server of a URL, so that a
// run stopped by Ctrl-C, or killed, loses none of them, and the next run
// finishes them.
type jetstreamAudit struct {
	a       *jsactor.Actor[auditEvent]
	nc      *nats.Conn
	server  *embeddedJetStream // nil for a NATS of the user's
	where   string             // the server, for the header
	start   jsactor.Stats      // read before the workers started: what earlier runs left
	refused atomic.Uint64      // sends that failed

	mu   sync.Mutex
	last actor.Stats // the latest stats read, kept while reads fail
	end  *jsactor.Stats
}

// newJetStreamAudit connects to the NATS server at url, or starts an
// embedded one storing in dir when url is "", reads what earlier runs
// left, and starts the actor with cfg's settings; dir "" is
// defaultJetStreamDir.
func newJetStreamAudit(ctx context.Context, url, dir string, cfg config.Actor, handle actor.Handler[auditEvent], logger *slog.Logger) (_ *jetstreamAudit, err error) {
	jcfg, err := jetstreamConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("the audit actor's settings do not suit JetStream: %w", err)
	}
	jcfg.Prefix, jcfg.Logger = demoPrefix, logger
	jcfg.OnError = func(*actor.TaskError) {} // counted in Stats, summed up at the end

	d := &jetstreamAudit{}
	defer func() {
		if err != nil {
			d.shutdown()
		}
	}()
	if url == "" {
		if d.server, err = startEmbeddedJetStream(dir, "demo"); err != nil {
			return nil, err
		}
		url, d.where = d.server.url(), d.server.describe()
	} else {
		d.where = "NATS at " + redactURLs(url)
	}
	d.nc, err = nats.Connect(url, nats.Name("actorpool demo"), nats.Timeout(pingTimeout))
	if err != nil {
		return nil, fmt.Errorf("cannot reach %s: %w; is the server running? Write --jetstream alone to use an embedded one", d.where, err)
	}
	rctx, cancel := context.WithTimeout(ctx, pingTimeout)
	d.start, err = jsactor.ReadStats(rctx, d.nc, demoPrefix, cfg.Name)
	cancel()
	if err != nil && !errors.Is(err, jsactor.ErrUnknownActor) {
		return nil, fmt.Errorf("cannot set up the durable audit actor on %s: %w; does the server run JetStream?", d.where, err)
	}
	nctx, cancel := context.WithTimeout(ctx, pingTimeout)
	d.a, err = jsactor.New(nctx, d.nc, cfg.Name, handle, jcfg)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("cannot set up the durable audit actor on %s: %w", d.where, err)
	}
	return d, nil
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

// shutdown closes the connection and stops the embedded server, if any.
func (d *jetstreamAudit) shutdown() {
	if d.nc != nil {
		d.nc.Close()
	}
	if d.server != nil {
		d.server.shutdown()
	}
}

func (d *jetstreamAudit) store() string { return "JetStream" }

// header says where the queue is and what this run found in it.
func (d *jetstreamAudit) header() string {
	work, _, _ := d.a.Streams()
	s := fmt.Sprintf("  actor %q is durable: its queue is in stream %s on %s, kept between runs\n", d.a.Name(), work, d.where)
	if n := jsLeft(d.start); n > 0 {
		s += fmt.Sprintf("  resumed %s left by an earlier run\n", plural(n, "task"))
	}
	return s
}

// footer says what the run leaves in the queue for the next one.
func (d *jetstreamAudit) footer() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	work, _, _ := d.a.Streams()
	switch {
	case d.end == nil:
		return fmt.Sprintf("actor %q is durable: what it left in stream %s could not be read; the next run says what it finds", d.a.Name(), work)
	case jsLeft(*d.end) == 0:
		return fmt.Sprintf("actor %q is durable: its queue in stream %s is empty", d.a.Name(), work)
	}
	return fmt.Sprintf("actor %q is durable: %s left queued in stream %s for the next run", d.a.Name(), plural(jsLeft(*d.end), "task"), work)
}

// jsLeft is how many of the actor's tasks s says are still to run.
func jsLeft(s jsactor.Stats) int { return s.Queued + s.Scheduled + s.Running + s.Retrying }

func (d *jetstreamAudit) send(ctx context.Context, e auditEvent) error {
	// As for the PostgreSQL actor: a request that succeeded gets its audit
	// task even when the run ends during the send.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
	defer cancel()
	_, err := d.a.Send(sctx, e)
	if err != nil {
		d.refused.Add(1)
	}
	return err
}

func (d *jetstreamAudit) stats() actor.Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.end != nil {
		return d.last
	}
	ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
	defer cancel()
	if s, err := d.a.Stats(ctx); err == nil {
		d.last = d.since(s)
	}
	return d.last
}

// since returns s in the in-memory actor's shape, its counters counted
// from the start of the run.
func (d *jetstreamAudit) since(s jsactor.Stats) actor.Stats {
	refused := d.refused.Load()
	return actor.Stats{
		Submitted:    s.Accepted - d.start.Accepted + refused,
		Rejected:     refused,
		Completed:    s.Completed - d.start.Completed,
		Failed:       s.Failed - d.start.Failed,
		Retried:      s.Retried - d.start.Retried,
		DeadLettered: s.DeadLettered - d.start.DeadLettered,
		Queued:       s.Queued + s.Scheduled,
		Retrying:     s.Retrying,
		Running:      s.Running,
		Workers:      s.Workers,
		Busy:         s.Busy,
		Idle:         s.Idle,
		OldestQueued: s.OldestQueued,
	}
}

// close lets a run that ran its course finish the queue until ctx ends;
// then, or at once when interrupted, it closes the actor, which gives the
// tasks it still holds back to the stream and adds its counters to the
// server; it reads what is left, and lets go of the server.
func (d *jetstreamAudit) close(ctx context.Context, interrupted bool) error {
	if !interrupted {
		d.drain(ctx)
	}
	err := d.a.Close(ctx)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statsTimeout)
	defer cancel()
	s, serr := d.a.Stats(rctx)
	d.mu.Lock()
	if serr == nil {
		d.last, d.end = d.since(s), &s
	}
	d.mu.Unlock()
	d.shutdown()
	return errors.Join(err, serr)
}

// drain waits until the actor's queue is empty or ctx ends. The gauges
// are read one after another, so that a task moving between subjects
// can be missed by one read: the queue counts as empty when two reads a
// poll apart find it so.
func (d *jetstreamAudit) drain(ctx context.Context) {
	t := time.NewTicker(drainPoll)
	defer t.Stop()
	empty := 0
	for {
		if s, err := d.a.Stats(ctx); err == nil && jsLeft(s) == 0 {
			if empty++; empty == 2 {
				return
			}
		} else {
			empty = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
