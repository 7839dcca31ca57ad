package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/actorpool/actorpool/internal/testenv"
)

// TestParseConsole proves that the console's command line is checked
// before anything is connected to: the database is required, the listen
// address must be host:port, and an address other than a loopback one
// needs a token of 16 characters or more, from --token or the
// environment.
func TestParseConsole(t *testing.T) {
	const dsn = "postgres://app@127.0.0.1:5432/app"
	const token = "0123456789abcdef"
	for _, tt := range []struct {
		args   []string
		env    string // ACTORPOOL_CONSOLE_TOKEN
		code   int
		stderr string
		listen string
		token  string
		prefix string // with --jetstream
		url    string // with --jetstream=URL
		dir    string // with --jetstream-dir
	}{
		{args: []string{"--postgres", dsn}, code: -1, listen: "127.0.0.1:8080"},
		{args: []string{"--postgres", dsn, "--listen", "localhost:0"}, code: -1, listen: "localhost:0"},
		{args: []string{"--postgres", dsn, "--listen", "[::1]:9000"}, code: -1, listen: "[::1]:9000"},
		{args: []string{"--postgres", dsn, "--listen", "0.0.0.0:8080", "--token", token}, code: -1, listen: "0.0.0.0:8080", token: token},
		{args: []string{"--postgres", dsn, "--listen", ":8080"}, env: token, code: -1, listen: ":8080", token: token},
		{args: []string{"--postgres", dsn, "--token", token + "x"}, env: token, code: -1, listen: "127.0.0.1:8080", token: token + "x"},
		{args: []string{"--postgres", dsn, "--listen", ":8080"}, code: 2, stderr: `--listen ":8080" is not a loopback address, so write actions need a token: pass --token, or set ACTORPOOL_CONSOLE_TOKEN`},
		{args: []string{"--postgres", dsn, "--listen", "192.0.2.1:8080"}, code: 2, stderr: "is not a loopback address"},
		{args: []string{"--postgres", dsn, "--listen", "example.com:8080"}, code: 2, stderr: "is not a loopback address"},
		{args: []string{"--postgres", dsn, "--token", "short"}, code: 2, stderr: "the token is 5 characters long: use one of at least 16"},
		{args: []string{"--postgres", dsn}, env: "short", code: 2, stderr: "the token is 5 characters long"},
		{args: []string{"--postgres", dsn, "--listen", "8080"}, code: 2, stderr: `--listen "8080": address 8080: missing port in address; write it as host:port`},
		{args: []string{"--postgres", dsn, "--listen", "127.0.0.1:http"}, code: 2, stderr: `port "http" is not a port number: use 1 to 65535`},
		{args: []string{"--postgres", dsn, "--listen", "127.0.0.1:70000"}, code: 2, stderr: `port "70000" is not a port number`},
		{args: []string{}, code: 2, stderr: "--postgres or --jetstream is required"},
		{args: []string{"--postgres", "mysql://x"}, code: 2, stderr: "--postgres: cannot parse"},
		{args: []string{"--postgres", dsn, "--schema", ""}, code: 2, stderr: "--schema is empty"},
		{args: []string{"--postgres", dsn, "now"}, code: 2, stderr: `unexpected argument "now"`},
		{args: []string{"--bogus"}, code: 2, stderr: "flag provided but not defined: -bogus\nRun 'actorpool help console' for its flags."},
		{args: []string{"--jetstream"}, code: -1, listen: "127.0.0.1:8080", prefix: "actorpool_demo"},
		{args: []string{"--jetstream", "--jetstream-dir", "/tmp/store", "--prefix", "orders"}, code: -1, listen: "127.0.0.1:8080", prefix: "orders", dir: "/tmp/store"},
		{args: []string{"--jetstream=nats://127.0.0.1:4222"}, code: -1, listen: "127.0.0.1:8080", prefix: "actorpool", url: "nats://127.0.0.1:4222"},
		{args: []string{"--jetstream=nats://h:4222", "--listen", ":8080"}, env: token, code: -1, listen: ":8080", token: token, prefix: "actorpool", url: "nats://h:4222"},
		{args: []string{"--jetstream", "--listen", ":8080"}, code: 2, stderr: "is not a loopback address, so write actions need a token"},
		{args: []string{"--jetstream", "nats://h:4222", "--prefix", "orders"}, code: -1, listen: "127.0.0.1:8080", prefix: "orders", url: "nats://h:4222"},
		{args: []string{"--jetstream=h:4222"}, code: 2, stderr: "--jetstream=h:4222: not a URL"},
		{args: []string{"--jetstream="}, code: 2, stderr: "--jetstream=: no URL after '='"},
		{args: []string{"--jetstream", "--postgres", dsn}, code: 2, stderr: "--jetstream and --postgres: the console serves the actors of one of them; choose one"},
		{args: []string{"--jetstream", "--schema", "jobs"}, code: 2, stderr: "--schema: the schema of the actors' tables in PostgreSQL, which needs --postgres"},
		{args: []string{"--postgres", dsn, "--prefix", "orders"}, code: 2, stderr: "--prefix: the prefix of the actors' streams on JetStream, which needs --jetstream"},
		{args: []string{"--jetstream", "--prefix", ""}, code: 2, stderr: "--prefix is empty"},
		{args: []string{"--jetstream", "--prefix", "a.b"}, code: 2, stderr: `--prefix "a.b": jsactor: Config.Prefix is "a.b": must be 1 to 64 letters, digits, '-' and '_'`},
		{args: []string{"--jetstream=nats://h:4222", "--jetstream-dir", "/tmp/x"}, code: 2, stderr: "--jetstream-dir: the store of the embedded server, which only --jetstream alone opens"},
		{args: []string{"--postgres", dsn, "--jetstream-dir", "/tmp/x"}, code: 2, stderr: "--jetstream-dir: the store of the embedded server"},
		{args: []string{"--jetstream", "--jetstream-dir", ""}, code: 2, stderr: "--jetstream-dir is empty"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			f, code := parseConsole(tt.args, func(k string) string {
				if k == consoleTokenEnv {
					return tt.env
				}
				return ""
			}, &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) || stdout.Len() != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stderr with %q", code, stdout.String(), stderr.String(), tt.code, tt.stderr)
			}
			jetstream := tt.prefix != ""
			if code == -1 && (f.listen != tt.listen || f.token != tt.token || (f.pool != nil) == jetstream || f.jetstream.on != jetstream ||
				f.prefix != tt.prefix || f.jetstream.url != tt.url || f.jsDir != tt.dir) {
				t.Errorf("flags %+v; want listen %q, token %q, prefix %q, url %q, dir %q", f, tt.listen, tt.token, tt.prefix, tt.url, tt.dir)
			}
		})
	}
}

// TestConsoleUsage proves that the command's help names the console.
func TestConsoleUsage(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{"help", "console"}, 0, "actorpool console --postgres URL [--schema NAME] [--listen ADDR] [--token TOKEN]"},
		{[]string{"console", "--help"}, 0, `(default "127.0.0.1:8080")`},
		{[]string{"help"}, 0, "actorpool console --postgres URL  a web console on the durable actors"},
		{[]string{"help"}, 0, "actorpool console --jetstream     the same, for those on NATS JetStream"},
		{[]string{"help", "console"}, 0, "actorpool console --jetstream[=URL] [--jetstream-dir DIR] [--prefix NAME]"},
	} {
		o := runCmd(t, nil, tt.args...)
		if o.code != tt.code || !strings.Contains(o.stdout, tt.stdout) {
			t.Errorf("%q: want exit %d, stdout with %q\n%v", tt.args, tt.code, tt.stdout, o)
		}
	}
}

// TestConsoleServe proves that the command serves the console, says
// where, fails clearly on a schema that was never migrated, and shuts
// down gracefully on SIGTERM with exit 0.
func TestConsoleServe(t *testing.T) {
	dsn := testenv.Postgres(t)
	schema := testSchema(t, dsn)
	o := runCmd(t, nil, "console", "--postgres", dsn, "--schema", schema, "--listen", "127.0.0.1:0")
	if o.code != 1 || !strings.Contains(o.stderr, "actorpool console: ") || !strings.Contains(o.stderr, schema) {
		t.Errorf("on a schema never migrated: want exit 1 naming the schema\n%v", o)
	}
	if o := runCmd(t, nil, "migrate", "--postgres", dsn, "--schema", schema); o.code != 0 {
		t.Fatalf("migrate: %v", o)
	}
	cmd, lines, wait := start(t, "console", "--postgres", dsn, "--schema", schema, "--listen", "127.0.0.1:0")
	line := waitLine(t, lines, "serving http://", nil)
	url := line[strings.Index(line, "http://"):]
	url = url[:strings.Index(url, " ")]
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "No actor is registered in this schema yet") || !strings.Contains(string(body), schema) {
		t.Errorf("GET %s: %d\n%s", url, resp.StatusCode, body)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if o := wait(); o.code != 0 || !strings.Contains(o.stdout, "actorpool console: stopped") || o.stderr != "" {
		t.Errorf("on SIGTERM: want exit 0 and a graceful stop\n%v", o)
	}
}

// TestConsoleJetStream proves that the console, given --jetstream alone,
// starts the demo's embedded server on its store and serves the actors
// under the demo's prefix; that a demo started on that store meanwhile
// stops, saying where the console's server is; and that a console started
// while a demo runs the server connects to it, and shows the demo's actor.
func TestConsoleJetStream(t *testing.T) {
	dir := t.TempDir()
	get := func(url string) string {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d\n%s", url, resp.StatusCode, body)
		}
		return string(body)
	}
	serving := func(line string) string {
		url := line[strings.Index(line, "http://"):]
		return url[:strings.Index(url, " ")]
	}

	cmd, lines, wait := start(t, "console", "--jetstream", "--jetstream-dir", dir, "--listen", "127.0.0.1:0")
	line := waitLine(t, lines, "serving http://", nil)
	if want := `prefix "actorpool_demo" on an embedded NATS server, stored in ` + dir; !strings.Contains(line, want) {
		t.Errorf("the console says %q, want %q", line, want)
	}
	if body := get(serving(line)); !strings.Contains(body, "No actor is registered in this prefix yet") || !strings.Contains(body, "<code>actorpool_demo</code>") {
		t.Errorf("the actors page of an empty store:\n%s", body)
	}
	o := runCmd(t, nil, "demo", "--jetstream", "--jetstream-dir", dir, "--duration", "1s")
	if o.code != 1 || !strings.Contains(o.stderr, "another actorpool console (pid ") || !strings.Contains(o.stderr, "reach its server with --jetstream=nats://127.0.0.1:") {
		t.Errorf("a demo on the console's store: want exit 1 naming the console and its server's URL\n%v", o)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if o := wait(); o.code != 0 || !strings.Contains(o.stdout, "actorpool console: stopped") || o.stderr != "" {
		t.Errorf("on SIGTERM: want exit 0 and a graceful stop\n%v", o)
	}

	demo, demoLines, demoWait := start(t, "demo", "--jetstream", "--jetstream-dir", dir, "--duration", "10m", "--clients", "2", "--size", "2", "--workers", "1")
	waitLine(t, demoLines, "is durable", nil)
	cmd, lines, wait = start(t, "console", "--jetstream", "--jetstream-dir", dir, "--listen", "127.0.0.1:0")
	line = waitLine(t, lines, "serving http://", nil)
	if want := "on the embedded NATS server of actorpool demo (pid "; !strings.Contains(line, want) || !strings.Contains(line, "stored in "+dir) {
		t.Errorf("the console says %q, want %q", line, want)
	}
	if body := get(serving(line)); !strings.Contains(body, `id="actor-audit"`) {
		t.Errorf("the actors page of the running demo's store shows no actor audit:\n%s", body)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if o := wait(); o.code != 0 || o.stderr != "" {
		t.Errorf("the console on SIGTERM: want exit 0\n%v", o)
	}
	if err := demo.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if o := demoWait(); o.code != exitInterrupted {
		t.Errorf("the demo on SIGINT: want exit %d\n%v", exitInterrupted, o)
	}
}

// TestConsoleJetStreamUnreachable proves that a console on a NATS URL
// where no server listens stops with exit 1, saying so.
func TestConsoleJetStreamUnreachable(t *testing.T) {
	o := runCmd(t, nil, "console", "--jetstream=nats://127.0.0.1:1", "--listen", "127.0.0.1:0")
	if o.code != 1 || !strings.Contains(o.stderr, "actorpool console: cannot reach NATS at nats://127.0.0.1:1") {
		t.Errorf("want exit 1 saying the server cannot be reached\n%v", o)
	}
}
