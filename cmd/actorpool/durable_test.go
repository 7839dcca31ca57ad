package main

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgactor"
)

// auditStats reads the durable audit actor's Stats in schema.
func auditStats(t *testing.T, dsn, schema string) pgactor.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	s, err := pgactor.ReadStats(ctx, c, schema, "audit")
	if err != nil {
		t.Fatal(err)
	}
	if s.Accepted != s.Completed+s.DeadLettered+uint64(left(s)) {
		t.Errorf("Stats break accepted = completed + dead-lettered + queued + scheduled + running + retrying: %+v", s)
	}
	return s
}

// reProgress matches a progress line and takes its tasks queued.
var reProgress = regexp.MustCompile(`^\s+\S+\s+[\d,]+\s+\d+/\d+\s+\d+\s+\d+\s+\S+\s+\S+\s+([\d,]+)\s+[\d,]+$`)

// TestDemoDurable proves that Ctrl-C in the middle of a run against
// PostgreSQL loses no audit task: the run exits 130 and says how many it
// left; the database holds them queued, none running (the leases were given
// back), none dead-lettered, every one accounted for; and the next run
// says it resumed them, finishes them, and leaves the queue empty. While
// the first runs, --metrics exports the durable actor.
func TestDemoDurable(t *testing.T) {
	dsn := testenv.Postgres(t)
	schema := testSchema(t, dsn)
	// One worker for many clients: the queue grows.
	cmd, lines, wait := start(t, "demo", "--postgres", dsn, "--schema", schema, "--duration", "10m",
		"--clients", "8", "--size", "4", "--workers", "1", "--metrics", "127.0.0.1:0")
	url := strings.TrimPrefix(waitLine(t, lines, "metrics: http://", nil), "metrics: ")
	header := waitLine(t, lines, "is durable", nil)
	if want := fmt.Sprintf(`actor "audit" is durable: its queue is in schema %q, kept between runs (migrated from version 0 to %d)`, schema, pgactor.SchemaVersion); !strings.Contains(header, want) {
		t.Errorf("header %q, want %q", header, want)
	}
	n, o := interruptDurable(t, cmd, lines, wait, url, "PostgreSQL", []string{
		fmt.Sprintf(`actorpool_actor_queued_tasks{actor="audit",schema=%q} `, schema),
		fmt.Sprintf(`actorpool_actor_workers{actor="audit",schema=%q} 1`, schema),
		`actorpool_actor_run_seconds_count{actor="audit",result="ok"}`,
		`actorpool_pool_max_objects{pool="audit"} 3`,
	}, regexp.MustCompile(fmt.Sprintf(`(?m)^actor "audit" is durable: (\d+) tasks? left queued in schema %q for the next run$`, schema)))
	s := auditStats(t, dsn, schema)
	if n == 0 || left(s) != n || s.Queued != n || s.Running != 0 || s.DeadLettered != 0 {
		t.Errorf("after Ctrl-C the run says %d tasks are left; the database has %+v: want them all queued, none running, none dead-lettered", n, s)
	}
	first := parseSummary(t, o.stdout)
	if uint64(first.completed) != s.Completed || first.failed != 0 {
		t.Errorf("the run says %d completed and %d requests failed; the database %d completed", first.completed, first.failed, s.Completed)
	}

	o = runCmd(t, nil, "demo", "--postgres", dsn, "--schema", schema, "--duration", "1s", "--clients", "2", "--size", "2", "--workers", "4")
	if o.code != 0 {
		t.Fatalf("exit code %d, want 0\n%v", o.code, o)
	}
	if want := fmt.Sprintf("\n  resumed %d tasks left by an earlier run\n", n); !strings.Contains(o.stdout, want) {
		t.Errorf("the next run does not say %q\n%v", want, o)
	}
	if want := fmt.Sprintf("actor \"audit\" is durable: its queue in schema %q is empty\n", schema); !strings.Contains(o.stdout, want) {
		t.Errorf("the next run does not say %q\n%v", want, o)
	}
	second := parseSummary(t, o.stdout)
	s2 := auditStats(t, dsn, schema)
	if left(s2) != 0 || s2.DeadLettered != 0 || s2.Completed != s2.Accepted {
		t.Errorf("after the next run: %+v, want every task completed", s2)
	}
	if second.completed != n+second.requests || s2.Completed != s.Completed+uint64(second.completed) {
		t.Errorf("the next run completed %d tasks for %d requests of its own and %d left; the database went from %d to %d completed",
			second.completed, second.requests, n, s.Completed, s2.Completed)
	}
}

// TestDemoSchemaFlag proves that --schema is refused without --postgres.
func TestDemoSchemaFlag(t *testing.T) {
	o := runCmd(t, nil, "demo", "--schema", "jobs")
	if o.code != 2 || !strings.Contains(o.stderr, "--schema: the durable audit actor needs --postgres") {
		t.Errorf("want exit 2 saying --schema needs --postgres\n%v", o)
	}
}

// interruptDurable lets a durable demo run serve 50 requests, checks that
// the metrics it exports at url hold each of want, stops it with Ctrl-C,
// and checks that it exits 130 saying its queue stays in store. It returns
// how many tasks the run says it left — the count left's first group
// matches in the summary — and the run's outcome.
func interruptDurable(t *testing.T, cmd *exec.Cmd, lines <-chan string, wait func() outcome, url, store string, want []string, left *regexp.Regexp) (int, outcome) {
	t.Helper()
	for {
		m := reProgress.FindStringSubmatch(waitLine(t, lines, "", reProgress))
		if atoi(m[1]) >= 50 {
			break
		}
	}
	body := scrape(t, url)
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("the metrics lack %s", w)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	o := wait()
	if o.code != exitInterrupted {
		t.Fatalf("exit code %d, want %d\n%v", o.code, exitInterrupted, o)
	}
	if !strings.Contains(o.stdout, "stopping: closing the audit actor, whose queue stays in "+store+" for the next run") {
		t.Errorf("the run does not say the queue stays\n%v", o)
	}
	m := left.FindStringSubmatch(o.stdout)
	if m == nil {
		t.Fatalf("the summary does not say how many tasks are left\n%v", o)
	}
	return atoi(m[1]), o
}
