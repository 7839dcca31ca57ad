package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/config"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/jsactor/jsserver"
)

// TestJetStreamFlag proves that --jetstream stands alone for the embedded
// server, takes a URL after '=' or a space, and refuses what is not a URL.
func TestJetStreamFlag(t *testing.T) {
	tests := []struct {
		args []string
		want jetstreamFlag
		rest []string // the arguments left
		err  string   // check's error contains this; "" for none
	}{
		{args: nil, want: jetstreamFlag{}},
		{args: []string{"--jetstream"}, want: jetstreamFlag{on: true}},
		{args: []string{"-jetstream=true"}, want: jetstreamFlag{on: true}},
		{args: []string{"--jetstream=false"}, want: jetstreamFlag{}},
		{args: []string{"--jetstream=nats://h:4222"}, want: jetstreamFlag{on: true, url: "nats://h:4222"}},
		{args: []string{"--jetstream=tls://a:1,tls://b:1"}, want: jetstreamFlag{on: true, url: "tls://a:1,tls://b:1"}},
		{args: []string{"--jetstream", "nats://h:4222"}, want: jetstreamFlag{on: true, url: "nats://h:4222"}},
		{args: []string{"--jetstream", "nats://h:4222", "extra"}, want: jetstreamFlag{on: true, url: "nats://h:4222"}, rest: []string{"extra"}},
		{args: []string{"--jetstream", "h:4222"}, want: jetstreamFlag{on: true}, rest: []string{"h:4222"}},
		{args: []string{"--jetstream="}, want: jetstreamFlag{on: true, blank: true}, err: "--jetstream=: no URL after '='"},
		{args: []string{"--jetstream=h:4222"}, want: jetstreamFlag{on: true, url: "h:4222"}, err: "--jetstream=h:4222: not a URL: write --jetstream alone for the embedded server, or --jetstream=nats://host:4222"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var j jetstreamFlag
			fs := flag.NewFlagSet("demo", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.Var(&j, "jetstream", "")
			if code := parseJetStreamFlags(fs, &j, tt.args, io.Discard, io.Discard); code >= 0 {
				t.Fatalf("parse: exit %d", code)
			}
			if err := j.check(); tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("check: %v, want an error containing %q", err, tt.err)
			}
			if j != tt.want || strings.Join(fs.Args(), " ") != strings.Join(tt.rest, " ") {
				t.Errorf("got %+v and arguments %q, want %+v and %q", j, fs.Args(), tt.want, tt.rest)
			}
		})
	}
}

// TestRedactURLs proves that the URLs shown keep no password or token.
func TestRedactURLs(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"nats://ann:secret@h:4222", "nats://ann:xxxxx@h:4222"},
		{"tls://a:1,nats://bob:pw@b:2", "tls://a:1,nats://bob:xxxxx@b:2"},
		{"nats://s3cr3t@h:4222", "nats://xxxxx@h:4222"}, // a token
	} {
		if got := redactURLs(tt.in); got != tt.want {
			t.Errorf("redactURLs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestJetStreamConfig proves that an actor entry maps onto jsactor.Config
// setting for setting, and that what jsactor cannot run is refused, field
// by field.
func TestJetStreamConfig(t *testing.T) {
	full := config.Actor{
		Name: "audit", Workers: 3, MaxAttempts: 4, Backoff: actor.Backoff{Initial: time.Millisecond, Max: time.Second},
		Timeout: 2 * time.Second, Grace: 3 * time.Second, Lease: 6 * time.Second, Heartbeat: time.Second,
		Capacity: 10, DeadLetterRejected: true, // the mailbox's: left out
	}
	cfg, err := jetstreamConfig(full)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workers != 3 || cfg.MaxAttempts != 4 || cfg.Backoff != full.Backoff || cfg.Timeout != 2*time.Second ||
		cfg.Grace != 3*time.Second || cfg.Lease != 6*time.Second || cfg.Heartbeat != time.Second {
		t.Errorf("jetstreamConfig(%+v) = %+v", full, cfg)
	}
	tests := []struct {
		name   string
		a      config.Actor
		fields []string // of the *ConfigErrors, in order
	}{
		{"elastic", config.Actor{MinWorkers: 1, MaxWorkers: 4, KeepAlive: time.Minute}, []string{"MinWorkers", "MaxWorkers", "KeepAlive"}},
		{"short lease", config.Actor{Lease: 100 * time.Millisecond}, []string{"Lease"}},
		{"heartbeat", config.Actor{Lease: time.Second, Heartbeat: 600 * time.Millisecond}, []string{"Heartbeat"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jetstreamConfig(tt.a)
			var got []string
			var walk func(error)
			walk = func(err error) {
				if j, ok := err.(interface{ Unwrap() []error }); ok {
					for _, e := range j.Unwrap() {
						walk(e)
					}
					return
				}
				var ce *actorpool.ConfigError
				if errors.As(err, &ce) {
					got = append(got, ce.Field)
				}
			}
			walk(err)
			if strings.Join(got, " ") != strings.Join(tt.fields, " ") {
				t.Errorf("jetstreamConfig: %v; fields %q, want %q", err, got, tt.fields)
			}
		})
	}
}

// jsStats reads the demo's durable audit actor on the embedded server's
// store in dir, with a server of the test's own on it, which it stops
// before it returns, so that the next run can have the store.
func jsStats(t *testing.T, dir string) jsactor.Stats {
	t.Helper()
	srv, err := jsserver.Start(jsserver.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := jsactor.ReadStats(ctx, nc, demoPrefix, "audit")
	if err != nil {
		t.Fatal(err)
	}
	if s.Accepted != s.Completed+s.DeadLettered+uint64(jsLeft(s)) {
		t.Errorf("Stats break accepted = completed + dead-lettered + queued + scheduled + running + retrying: %+v", s)
	}
	return s
}

// TestDemoJetStream runs the demo with its audit actor on an embedded
// JetStream server, storing in the user's cache directory, and checks
// that it says where, drains the queue and does one task per request.
func TestDemoJetStream(t *testing.T) {
	cache := t.TempDir()
	o := runCmd(t, []string{"XDG_CACHE_HOME=" + cache, "HOME=" + cache},
		"demo", "--jetstream", "--duration", "2s", "--clients", "8", "--size", "2", "--workers", "2")
	if o.code != 0 {
		t.Fatalf("exit code %d, want 0\n%v", o.code, o)
	}
	dir := filepath.Join(cache, "actorpool", "jetstream")
	for _, want := range []string{
		"against embedded Redis (miniredis) at 127.0.0.1:",
		fmt.Sprintf(`actor "audit" is durable: its queue is in stream actorpool_demo_audit on an embedded NATS server, stored in %s, kept between runs`, dir),
		`actor "audit" is durable: its queue in stream actorpool_demo_audit is empty`,
	} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("the output lacks %q\n%v", want, o)
		}
	}
	if strings.Contains(o.stdout, "resumed") {
		t.Errorf("a first run says it resumed tasks\n%v", o)
	}
	sum := checkSummary(t, o.stdout)
	if o.stderr != "" {
		t.Errorf("stderr: %s", o.stderr)
	}
	if s := jsStats(t, dir); s.Accepted != uint64(sum.requests) || s.Completed != s.Accepted {
		t.Errorf("the store holds %+v after %d requests: want every one accepted and completed", s, sum.requests)
	}
}

// TestDemoJetStreamDurable proves that Ctrl-C in the middle of a run on
// JetStream loses no audit task: the run exits 130 and says how many it
// left; the store holds them queued, none running (the tasks held were
// given back), none dead-lettered, every one accounted for; and the next
// run says it resumed them, finishes them, and leaves the queue empty.
// While the first runs, --metrics exports the durable actor.
func TestDemoJetStreamDurable(t *testing.T) {
	dir := t.TempDir()
	// One worker for many clients: the queue grows.
	cmd, lines, wait := start(t, "demo", "--jetstream", "--jetstream-dir", dir, "--duration", "10m",
		"--clients", "8", "--size", "4", "--workers", "1", "--metrics", "127.0.0.1:0")
	url := strings.TrimPrefix(waitLine(t, lines, "metrics: http://", nil), "metrics: ")
	waitLine(t, lines, "is durable", nil)
	n, o := interruptDurable(t, cmd, lines, wait, url, "JetStream", []string{
		`actorpool_actor_queued_tasks{actor="audit",prefix="actorpool_demo"} `,
		`actorpool_actor_workers{actor="audit",prefix="actorpool_demo"} 1`,
		`actorpool_actor_run_seconds_count{actor="audit",result="ok"}`,
		`actorpool_pool_max_objects{pool="audit"} 1`,
	}, regexp.MustCompile(`(?m)^actor "audit" is durable: (\d+) tasks? left queued in stream actorpool_demo_audit for the next run$`))
	s := jsStats(t, dir)
	if n == 0 || jsLeft(s) != n || s.Queued != n || s.Running != 0 || s.DeadLettered != 0 {
		t.Errorf("after Ctrl-C the run says %d tasks are left; the store has %+v: want them all queued, none running, none dead-lettered", n, s)
	}
	first := parseSummary(t, o.stdout)
	if uint64(first.completed) != s.Completed || first.failed != 0 {
		t.Errorf("the run says %d completed and %d requests failed; the store %d completed", first.completed, first.failed, s.Completed)
	}

	o = runCmd(t, nil, "demo", "--jetstream", "--jetstream-dir", dir, "--duration", "1s", "--clients", "2", "--size", "2", "--workers", "4")
	if o.code != 0 {
		t.Fatalf("exit code %d, want 0\n%v", o.code, o)
	}
	if want := fmt.Sprintf("\n  resumed %d tasks left by an earlier run\n", n); !strings.Contains(o.stdout, want) {
		t.Errorf("the next run does not say %q\n%v", want, o)
	}
	if want := "actor \"audit\" is durable: its queue in stream actorpool_demo_audit is empty\n"; !strings.Contains(o.stdout, want) {
		t.Errorf("the next run does not say %q\n%v", want, o)
	}
	second := parseSummary(t, o.stdout)
	s2 := jsStats(t, dir)
	if jsLeft(s2) != 0 || s2.DeadLettered != 0 || s2.Completed != s2.Accepted {
		t.Errorf("after the next run: %+v, want every task completed", s2)
	}
	if second.completed != n+second.requests || s2.Completed != s.Completed+uint64(second.completed) {
		t.Errorf("the next run completed %d tasks for %d requests of its own and %d left; the store went from %d to %d completed",
			second.completed, second.requests, n, s.Completed, s2.Completed)
	}
}

// TestDemoJetStreamURL runs the demo against a NATS server of the test's
// own, given by URL, and proves that one that cannot be reached stops the
// demo at once with exit code 1 and a message naming the URL.
func TestDemoJetStreamURL(t *testing.T) {
	srv, err := jsserver.Start(jsserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	o := runCmd(t, nil, "demo", "--jetstream="+srv.ClientURL(), "--duration", "1s", "--clients", "4", "--size", "2", "--workers", "2")
	if o.code != 0 {
		t.Fatalf("exit code %d, want 0\n%v", o.code, o)
	}
	if want := `its queue is in stream actorpool_demo_audit on NATS at ` + srv.ClientURL() + ", kept between runs"; !strings.Contains(o.stdout, want) {
		t.Errorf("the header does not say %q\n%v", want, o)
	}
	checkSummary(t, o.stdout)

	addr := "nats://" + testenv.FreeAddr(t)
	o = runCmd(t, nil, "demo", "--jetstream="+addr, "--duration", "1s")
	if o.code != 1 || !strings.Contains(o.stderr, "cannot reach NATS at "+addr) || !strings.Contains(o.stderr, "Write --jetstream alone to use an embedded one") {
		t.Errorf("want exit 1 saying the server cannot be reached\n%v", o)
	}
}

// TestDemoJetStreamConfig proves that the demo takes the audit actor's
// settings from --config on JetStream, and that settings JetStream cannot
// run stop it with their place in the file.
func TestDemoJetStreamConfig(t *testing.T) {
	dir := t.TempDir()
	example := filepath.Join("..", "..", "examples", "actorpool.yaml")
	o := runCmd(t, nil, "demo", "--jetstream", "--jetstream-dir", filepath.Join(dir, "store"), "--config", example, "--duration", "1s", "--clients", "4")
	if o.code != 0 {
		t.Fatalf("exit code %d, want 0\n%v", o.code, o)
	}
	if !strings.Contains(o.stdout, `actor "audit": 2 workers writing audit records`) {
		t.Errorf("the run does not use the file's settings\n%v", o)
	}
	checkSummary(t, o.stdout)

	elastic := filepath.Join(dir, "elastic.yaml")
	if err := os.WriteFile(elastic, []byte("pools:\n  demo:\n    max_objects: 4\nactors:\n  audit:\n    min_workers: 1\n    max_workers: 4\n    lease: 200ms\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o = runCmd(t, nil, "demo", "--jetstream", "--jetstream-dir", filepath.Join(dir, "store"), "--config", elastic, "--duration", "1s")
	for _, want := range []string{
		elastic + ":6:18: actors.audit.min_workers = 1: must not be set on JetStream, whose actor runs a fixed number of workers: set workers",
		elastic + ":7:18: actors.audit.max_workers = 4: must not be set on JetStream",
		elastic + ":8:12: actors.audit.lease = 200ms: must be at least 500ms",
	} {
		if o.code != 1 || !strings.Contains(o.stderr, want) {
			t.Errorf("want exit 1 with %q\n%v", want, o)
		}
	}
	// --workers makes the actor a fixed one; the lease is still too short.
	o = runCmd(t, nil, "demo", "--jetstream", "--jetstream-dir", filepath.Join(dir, "store"), "--config", elastic, "--workers", "2", "--duration", "1s")
	if o.code != 1 || strings.Contains(o.stderr, "min_workers") || !strings.Contains(o.stderr, "actors.audit.lease = 200ms") {
		t.Errorf("want exit 1 with the lease's problem only\n%v", o)
	}
}
