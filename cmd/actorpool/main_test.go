package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests below run the command as a process, built once, with the race
// detector when the tests have it.
var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func command(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "actorpool-cmd-test")
		if buildErr != nil {
			return
		}
		binary = filepath.Join(buildDir, "actorpool")
		args := []string{"build", "-o", binary}
		if raceEnabled {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// processTimeout bounds every run of the command: far more than any run
// needs, so that a hung process fails its test instead of the whole suite.
const processTimeout = 2 * time.Minute

type outcome struct {
	code           int
	stdout, stderr string
}

// runCmd runs the command with args and env added to the environment.
func runCmd(t *testing.T, env []string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), processTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("actorpool %s: %v", strings.Join(args, " "), err)
	}
	return outcome{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}

func (o outcome) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s--- stderr:\n%s", o.code, o.stdout, o.stderr)
}

// TestUsage proves that each command answers help and mistakes with the
// exit code and the words that say what to do.
func TestUsage(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		stdout     string // contained in stdout
		stderr     string // contained in stderr
		emptyOther bool   // whether the other stream must stay empty
	}{
		{args: nil, code: 2, stderr: "actorpool demo [flags]"},
		{args: []string{"help"}, code: 0, stdout: "Exit codes: 0 success, 1 failure, 2 usage error, 130 stopped by Ctrl-C", emptyOther: true},
		{args: []string{"--help"}, code: 0, stdout: "actorpool config check FILE..."},
		{args: []string{"frobnicate"}, code: 2, stderr: `unknown command "frobnicate"`},
		{args: []string{"help", "frobnicate"}, code: 2, stderr: "the commands are demo, config, migrate, console and bench"},
		{args: []string{"demo", "--help"}, code: 0, stdout: "how long to run, such as 30s or 2m (default 10s)", emptyOther: true},
		{args: []string{"help", "demo"}, code: 0, stdout: "-postgres DSN"},
		{args: []string{"demo", "--bogus"}, code: 2, stderr: "flag provided but not defined: -bogus\nRun 'actorpool help demo' for its flags."},
		{args: []string{"demo", "--clients", "0"}, code: 2, stderr: "--clients 0: there must be at least 1 client"},
		{args: []string{"demo", "--duration", "-1s"}, code: 2, stderr: "--duration -1s: must be more than 0"},
		{args: []string{"demo", "--size", "0"}, code: 2, stderr: "--size 0: must be between 1 and"},
		{args: []string{"demo", "--workers", "0"}, code: 2, stderr: "--workers 0: the actor needs at least 1 worker"},
		{args: []string{"demo", "--redis", "a:1", "--postgres", "postgres://b"}, code: 2, stderr: "choose one server"},
		{args: []string{"demo", "--chart", "run.txt"}, code: 2, stderr: "--chart run.txt: the file name must end in .svg, .png, .pdf"},
		{args: []string{"demo", "--progress", "fancy"}, code: 2, stderr: `--progress "fancy": must be live, lines, off or auto`},
		{args: []string{"demo", "now"}, code: 2, stderr: `unexpected argument "now"`},
		{args: []string{"help", "demo"}, code: 0, stdout: "--jetstream=nats://host:4222"},
		{args: []string{"demo", "--jetstream", "--postgres", "postgres://b"}, code: 2, stderr: "--jetstream and --postgres: the audit actor is durable on one of them; choose one"},
		// A URL after a space is the flag's, and the flags after it are read.
		{args: []string{"demo", "--jetstream", "nats://h:4222", "--jetstream-dir", "/tmp/x"}, code: 2, stderr: "--jetstream-dir: the store of the embedded server"},
		{args: []string{"demo", "--jetstream=h:4222"}, code: 2, stderr: "--jetstream=h:4222: not a URL: write --jetstream alone for the embedded server, or --jetstream=nats://host:4222"},
		{args: []string{"demo", "--jetstream="}, code: 2, stderr: "--jetstream=: no URL after '='"},
		{args: []string{"help"}, code: 0, stdout: "actorpool demo --jetstream "},
		{args: []string{"demo", "--jetstream-dir", "/tmp/x"}, code: 2, stderr: "--jetstream-dir: the store of the embedded server, which only --jetstream alone starts"},
		{args: []string{"demo", "--jetstream=nats://h:4222", "--jetstream-dir", "/tmp/x"}, code: 2, stderr: "--jetstream-dir: the store of the embedded server"},
		{args: []string{"demo", "--jetstream", "--schema", "jobs"}, code: 2, stderr: "--schema: the durable audit actor needs --postgres"},
		{args: []string{"config", "check", "--bogus", "f.yaml"}, code: 2, stderr: "actorpool config check: flag provided but not defined: -bogus"},
		{args: []string{"config", "check", "--jetstream"}, code: 2, stderr: "name the files to check"},
		{args: []string{"bench"}, code: 0, stdout: "cd bench && go run ./cmd/poolbench", emptyOther: true},
		{args: []string{"bench", "--help"}, code: 0, stdout: "cd bench && go run ./cmd/poolbench"},
		{args: []string{"bench", "all"}, code: 2, stderr: `unexpected argument "all"`},
		{args: []string{"config"}, code: 2, stderr: "missing subcommand: 'check FILE...'"},
		{args: []string{"config", "lint"}, code: 2, stderr: `unknown subcommand "lint"`},
		{args: []string{"config", "check"}, code: 2, stderr: "name the files to check"},
		{args: []string{"help", "config"}, code: 0, stdout: "ACTORPOOL_POOL_<POOL>_<SETTING>"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(append([]string{"actorpool"}, tt.args...), " "), func(t *testing.T) {
			o := runCmd(t, nil, tt.args...)
			if o.code != tt.code {
				t.Errorf("exit code %d, want %d\n%v", o.code, tt.code, o)
			}
			if !strings.Contains(o.stdout, tt.stdout) || !strings.Contains(o.stderr, tt.stderr) {
				t.Errorf("want stdout containing %q and stderr containing %q\n%v", tt.stdout, tt.stderr, o)
			}
			if tt.emptyOther && (tt.stdout != "" && o.stderr != "" || tt.stderr != "" && o.stdout != "") {
				t.Errorf("want nothing on the other stream\n%v", o)
			}
		})
	}
}

// TestConfigCheck proves that config check reports every problem with its
// place and rule, exits 1 on problems and 0 on a good file, and honours
// overrides from the environment.
func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.yaml", "pools:\n  db:\n    max_objects: 4\n")
	bad := write("bad.yaml", "pools:\n  db:\n    max_objects: 4\n    min_idle: 5\n    max_idle_time: 10\nactors:\n  mail:\n    overflow: reject\n")
	elastic := write("elastic.yaml", "actors:\n  a:\n    max_workers: 4\n    lease: 200ms\n  b:\n    min_workers: 1\n    max_workers: 2\n")
	example := filepath.Join("..", "..", "examples", "actorpool.yaml")

	tests := []struct {
		name   string
		args   []string
		env    []string
		code   int
		stdout []string // lines, in order
		stderr string
	}{
		{name: "example", args: []string{example}, code: 0,
			stdout: []string{example + ": ok: 2 pools (demo, reports), 1 actor (audit)"}},
		{name: "good", args: []string{good}, code: 0, stdout: []string{good + ": ok: 1 pool (db), no actors"}},
		{name: "bad", args: []string{bad}, code: 1, stderr: bad + ": 3 problems", stdout: []string{
			bad + ":4:15: pools.db.min_idle = 5: must not exceed max_objects (4)",
			bad + ":5:20: pools.db.max_idle_time = 10: must be a duration with a unit, such as 5s, 250ms or 1m30s",
			bad + ":8:15: actors.mail.overflow = reject: must be block when capacity is zero: the other policies need a bounded mailbox",
		}},
		{name: "good and bad", args: []string{good, bad}, code: 1, stdout: []string{
			good + ": ok: 1 pool (db), no actors",
			bad + ":4:15: pools.db.min_idle = 5: must not exceed max_objects (4)",
			bad + ":5:20: pools.db.max_idle_time = 10: must be a duration with a unit, such as 5s, 250ms or 1m30s",
			bad + ":8:15: actors.mail.overflow = reject: must be block when capacity is zero: the other policies need a bounded mailbox",
		}},
		{name: "override", args: []string{good}, env: []string{"ACTORPOOL_POOL_DB_MAX_OBJECTS=none"}, code: 1, stdout: []string{
			good + ":3:18: $ACTORPOOL_POOL_DB_MAX_OBJECTS: pools.db.max_objects = none: must be a whole number, such as 8",
		}},
		{name: "missing", args: []string{filepath.Join(dir, "nope.yaml")}, code: 1, stderr: "no such file or directory"},
		{name: "jetstream, example", args: []string{"--jetstream", example}, code: 0,
			stdout: []string{example + ": ok: 2 pools (demo, reports), 1 actor (audit)"}},
		{name: "jetstream", args: []string{"--jetstream", good, elastic}, code: 1, stderr: elastic + ": 4 problems", stdout: []string{
			good + ": ok: 1 pool (db), no actors",
			elastic + ":3:18: actors.a.max_workers = 4: must not be set on JetStream, whose actor runs a fixed number of workers: set workers",
			elastic + ":4:12: actors.a.lease = 200ms: must be at least 500ms (zero means the default, 5s)",
			elastic + ":6:18: actors.b.min_workers = 1: must not be set on JetStream, whose actor runs a fixed number of workers: set workers",
			elastic + ":7:18: actors.b.max_workers = 2: must not be set on JetStream, whose actor runs a fixed number of workers: set workers",
		}},
		{name: "elastic without jetstream", args: []string{elastic}, code: 0, stdout: []string{elastic + ": ok: no pools, 2 actors (a, b)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runCmd(t, tt.env, append([]string{"config", "check"}, tt.args...)...)
			if o.code != tt.code {
				t.Errorf("exit code %d, want %d\n%v", o.code, tt.code, o)
			}
			if got := strings.Split(strings.TrimSuffix(o.stdout, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(tt.stdout, "\n") {
				t.Errorf("stdout:\n%s\nwant:\n%s", o.stdout, strings.Join(tt.stdout, "\n"))
			}
			if !strings.Contains(o.stderr, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", o.stderr, tt.stderr)
			}
		})
	}
}

// A summary is what the demo's summary says, read back from its text.
type summary struct {
	requests, failed, tasks, taskFailed int
	created, destroyed                  map[string]int
	completed                           int
}

var (
	reRequests = regexp.MustCompile(`(?m)^\s+requests\s+([\d,]+)\s+([\d,]+)\s+[\d,]+$`)
	reTasks    = regexp.MustCompile(`(?m)^\s+audit tasks\s+([\d,]+)\s+([\d,]+)\s+[\d,]+$`)
	rePool     = regexp.MustCompile(`(?m)^pool "(\w+)" \([a-z ]+\): \d+ max, ([\d,]+) created, ([\d,]+) destroyed;`)
	reActor    = regexp.MustCompile(`(?m)^actor "audit": ([\d,]+) submitted, ([\d,]+) completed,`)
)

func atoi(s string) int {
	n := 0
	for _, r := range s {
		if r != ',' {
			n = n*10 + int(r-'0')
		}
	}
	return n
}

func parseSummary(t *testing.T, out string) summary {
	t.Helper()
	s := summary{created: map[string]int{}, destroyed: map[string]int{}}
	m := reRequests.FindStringSubmatch(out)
	mt := reTasks.FindStringSubmatch(out)
	ma := reActor.FindStringSubmatch(out)
	if m == nil || mt == nil || ma == nil {
		t.Fatalf("no summary in the output:\n%s", out)
	}
	s.requests, s.failed = atoi(m[1]), atoi(m[2])
	s.tasks, s.taskFailed = atoi(mt[1]), atoi(mt[2])
	s.completed = atoi(ma[2])
	for _, p := range rePool.FindAllStringSubmatch(out, -1) {
		s.created[p[1]], s.destroyed[p[1]] = atoi(p[2]), atoi(p[3])
	}
	return s
}

// checkSummary checks what every run must show: requests done, none
// failed, one audit task completed for each, and every connection the
// pools created destroyed by the end.
func checkSummary(t *testing.T, out string) summary {
	t.Helper()
	s := parseSummary(t, out)
	if s.requests == 0 || s.failed != 0 {
		t.Errorf("%d requests done, %d failed; want some done and none failed", s.requests, s.failed)
	}
	if s.tasks != s.requests || s.taskFailed != 0 || s.completed != s.requests {
		t.Errorf("%d audit tasks done (%d failed, actor says %d completed) for %d requests: want one each, all drained",
			s.tasks, s.taskFailed, s.completed, s.requests)
	}
	for _, pool := range []string{"demo", "audit"} {
		if s.created[pool] == 0 || s.created[pool] != s.destroyed[pool] {
			t.Errorf("pool %q: %d created, %d destroyed; want every connection destroyed by Close", pool, s.created[pool], s.destroyed[pool])
		}
	}
	for _, want := range []string{`latency\s+p50\s+p90\s+p99\s+p99\.9\s+max`, `pool wait\s+\S+`, `request latency, waiting for a connection included:\n\s+\d+\S* – `} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("summary lacks %s", want)
		}
	}
	return s
}

// TestDemo runs the README's demo, shortened, and checks its progress lines
// and its summary.
func TestDemo(t *testing.T) {
	o := runCmd(t, nil, "demo", "--duration", "2s", "--clients", "8", "--size", "2", "--workers", "2")
	if o.code != 0 {
		t.Fatalf("exit code %d, want 0\n%v", o.code, o)
	}
	if !strings.Contains(o.stdout, "actorpool demo: 8 clients for 2.0s against embedded Redis (miniredis) at 127.0.0.1:") {
		t.Errorf("no header naming the run\n%v", o)
	}
	if !strings.Contains(o.stdout, linesHeader) || !regexp.MustCompile(`(?m)^\s+[12]\.\ds\s+[\d,]+\s+\d/2\s`).MatchString(o.stdout) {
		t.Errorf("no progress lines (stdout is not a terminal)\n%v", o)
	}
	if strings.Contains(o.stdout, "\x1b[") {
		t.Errorf("escape codes in the output of a run that is not on a terminal\n%v", o)
	}
	checkSummary(t, o.stdout)
	if o.stderr != "" {
		t.Errorf("stderr: %s", o.stderr)
	}
}

// TestDemoLive proves that --progress live redraws its block in place.
func TestDemoLive(t *testing.T) {
	o := runCmd(t, nil, "demo", "--duration", "1s", "--clients", "4", "--size", "2", "--workers", "1", "--progress", "live")
	if o.code != 0 {
		t.Fatalf("exit code %d, want 0\n%v", o.code, o)
	}
	if !strings.Contains(o.stdout, "\x1b[4A\r\x1b[2K") || !strings.Contains(o.stdout, "in use,") {
		t.Errorf("no block redrawn in place\n%q", o.stdout)
	}
	checkSummary(t, o.stdout)
}

// TestDemoInterrupt proves that SIGINT stops the demo gracefully: the
// actor drains, the pools close, the summary prints, and the exit code is
// 130.
func TestDemoInterrupt(t *testing.T) {
	cmd, lines, wait := start(t, "demo", "--duration", "10m", "--clients", "8", "--size", "2")
	waitLine(t, lines, "tasks done", nil) // the header of the progress lines
	waitLine(t, lines, "", regexp.MustCompile(`^\s+1\.\ds\s`))
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	o := wait()
	if o.code != exitInterrupted {
		t.Fatalf("exit code %d, want %d\n%v", o.code, exitInterrupted, o)
	}
	if !strings.Contains(o.stdout, "stopped by Ctrl-C after") || !strings.Contains(o.stdout, "stopping: draining the audit actor") {
		t.Errorf("the summary does not say the run was stopped\n%v", o)
	}
	checkSummary(t, o.stdout)
}

// TestDemoMetrics proves that --metrics serves the pools' and the actor's
// metrics, histograms included, while the demo runs.
func TestDemoMetrics(t *testing.T) {
	cmd, lines, wait := start(t, "demo", "--duration", "10m", "--clients", "4", "--size", "2", "--metrics", "127.0.0.1:0")
	line := waitLine(t, lines, "metrics: http://", nil)
	url := strings.TrimPrefix(line, "metrics: ")
	waitLine(t, lines, "", regexp.MustCompile(`^\s+1\.\ds\s`)) // requests have run
	body := scrape(t, url)
	cmd.Process.Signal(syscall.SIGINT)
	if o := wait(); o.code != exitInterrupted {
		t.Errorf("exit code %d, want %d\n%v", o.code, exitInterrupted, o)
	}
	for _, want := range []string{
		`actorpool_pool_max_objects{pool="demo"} 2`,
		`actorpool_pool_max_objects{pool="audit"} 8`,
		`actorpool_pool_hold_seconds_bucket{pool="demo",le="+Inf"}`,
		`actorpool_pool_create_seconds_count{pool="demo",result="ok"}`,
		`actorpool_pool_wait_seconds_bucket{pool="demo",result="ok",le="+Inf"}`,
		`actorpool_actor_run_seconds_count{actor="audit",result="ok"}`,
		`actorpool_actor_queue_wait_seconds_count{actor="audit"}`,
		`actorpool_actor_workers{actor="audit"} 8`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics lack %s", want)
		}
	}
	if m := regexp.MustCompile(`(?m)^actorpool_pool_acquires_total\{pool="demo"\} (\d+)`).FindStringSubmatch(body); m == nil || m[1] == "0" {
		t.Errorf("actorpool_pool_acquires_total of the demo pool: %v, want more than 0", m)
	}
}

// TestDemoChart proves that --chart writes a chart in the format its name
// asks for.
func TestDemoChart(t *testing.T) {
	for _, tt := range []struct{ name, magic string }{
		{"run.svg", "<?xml"},
		{"run.png", "\x89PNG\r\n"},
		{"run.pdf", "%PDF-"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.name)
			o := runCmd(t, nil, "demo", "--duration", "1s", "--clients", "4", "--size", "2", "--progress", "off", "--chart", path)
			if o.code != 0 {
				t.Fatalf("exit code %d, want 0\n%v", o.code, o)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(data, []byte(tt.magic)) || len(data) < 1000 {
				t.Errorf("%s: %d bytes starting %q, want a chart starting %q", tt.name, len(data), data[:min(len(data), 16)], tt.magic)
			}
			if tt.name == "run.svg" && !bytes.Contains(data, []byte("wait for a connection (ms)")) {
				t.Errorf("the SVG lacks the wait panel's label")
			}
			if !strings.Contains(o.stdout, "chart: "+path) {
				t.Errorf("the output does not name the chart\n%v", o)
			}
		})
	}
}

// TestDemoConfig proves that --config takes the pools' and the actor's
// settings from the file, that flags override it, and that a file with
// problems stops the demo with them.
func TestDemoConfig(t *testing.T) {
	example := filepath.Join("..", "..", "examples", "actorpool.yaml")
	o := runCmd(t, nil, "demo", "--config", example, "--duration", "1s", "--clients", "4")
	if o.code != 0 {
		t.Fatalf("exit code %d, want 0\n%v", o.code, o)
	}
	if !strings.Contains(o.stdout, `pool "demo": 8 connections for requests; actor "audit": 2 workers writing audit records through pool "audit" (2)`) {
		t.Errorf("the run does not use the file's settings\n%v", o)
	}
	checkSummary(t, o.stdout)

	o = runCmd(t, []string{"ACTORPOOL_POOL_DEMO_MAX_OBJECTS=3"}, "demo", "--config", example, "--duration", "1s", "--clients", "4", "--workers", "1")
	if o.code != 0 || !strings.Contains(o.stdout, `pool "demo": 3 connections for requests; actor "audit": 1 worker writing audit records through pool "audit" (1)`) {
		t.Errorf("the environment and --workers do not override the file\n%v", o)
	}

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("pools:\n  demo:\n    max_objects: 0\n"), 0o600)
	o = runCmd(t, nil, "demo", "--config", bad, "--duration", "1s")
	if o.code != 1 || !strings.Contains(o.stderr, bad+":3:18: pools.demo.max_objects = 0: must be between 1 and") {
		t.Errorf("want exit 1 with the file's problem\n%v", o)
	}
	other := filepath.Join(dir, "other.yaml")
	os.WriteFile(other, []byte("pools:\n  db:\n    max_objects: 1\n"), 0o600)
	o = runCmd(t, nil, "demo", "--config", other, "--duration", "1s")
	if o.code != 1 || !strings.Contains(o.stderr, `declares no pool named "demo"`) {
		t.Errorf("want exit 1 saying the pool is missing\n%v", o)
	}
}

// start starts the command and returns it, a channel of its stdout's
// lines, and a function that waits for it to exit.
func start(t *testing.T, args ...string) (*exec.Cmd, <-chan string, func() outcome) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), processTimeout)
	cmd := exec.CommandContext(ctx, command(t), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	var all strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			select {
			case lines <- sc.Text():
			default: // nobody is waiting for lines any more
			}
		}
	}()
	var once sync.Once
	var o outcome
	wait := func() outcome {
		once.Do(func() {
			<-done
			cmd.Wait()
			cancel()
			o = outcome{cmd.ProcessState.ExitCode(), all.String(), stderr.String()}
		})
		return o
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		wait()
	})
	return cmd, lines, wait
}

// waitLine returns the first line containing s, or matching re; it fails t
// if none comes within processTimeout.
func waitLine(t *testing.T, lines <-chan string, s string, re *regexp.Regexp) string {
	t.Helper()
	timeout := time.After(processTimeout)
	for {
		select {
		case l := <-lines:
			if re != nil && re.MatchString(l) || re == nil && strings.Contains(l, s) {
				return l
			}
		case <-timeout:
			t.Fatalf("no line with %q or matching %v within %v", s, re, processTimeout)
		}
	}
}

// scrape gets url, retrying while the server is not up yet.
func scrape(t *testing.T, url string) string {
	t.Helper()
	deadline := time.Now().Add(processTimeout)
	for {
		body, err := get(url)
		if err == nil {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("scraping %s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
