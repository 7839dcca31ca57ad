package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
)

const full = `
pools:
  redis:
    max_objects: 16
    min_idle: 2
    max_idle_time: 5m
    max_lifetime: 1h
    max_queue_size: 1_000
    create_timeout: 2s
    test_timeout: 500ms
    validation_interval: 30s
    leak_threshold: 10s
    trace_acquires: true
    fifo: true
  small:
    max_objects: 1
actors:
  audit:
    min_workers: 1
    max_workers: 8
    keep_alive: 30s
    capacity: 100
    overflow: drop-oldest
    max_attempts: 5
    backoff: {initial: 10ms, max: 1s, multiplier: 3, jitter: 0.5}
    timeout: 2s
    grace: 3s
    dead_letter_rejected: true
    lease: 10s
    heartbeat: 2s
  mail:
`

// TestParseEverySetting proves that each key of the file reaches the field
// it names, for pools and actors, in the order the file declares them.
func TestParseEverySetting(t *testing.T) {
	f, err := Parse("full.yaml", []byte(full), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantPools := []Pool{
		{Name: "redis", Line: 3, Config: actorpool.Config{
			Name: "redis", MaxObjects: 16, MinIdle: 2, MaxIdleTime: 5 * time.Minute, MaxLifetime: time.Hour,
			MaxQueueSize: 1000, CreateTimeout: 2 * time.Second, TestTimeout: 500 * time.Millisecond,
			ValidationInterval: 30 * time.Second, LeakThreshold: 10 * time.Second, TraceAcquires: true, FIFO: true,
		}},
		{Name: "small", Line: 15, Config: actorpool.Config{Name: "small", MaxObjects: 1}},
	}
	if len(f.Pools) != len(wantPools) {
		t.Fatalf("got %d pools, want %d: %+v", len(f.Pools), len(wantPools), f.Pools)
	}
	for i, want := range wantPools {
		if f.Pools[i] != want {
			t.Errorf("pool %d:\n got %+v\nwant %+v", i, f.Pools[i], want)
		}
	}
	wantActors := []Actor{
		{Name: "audit", Line: 18, MinWorkers: 1, MaxWorkers: 8, KeepAlive: 30 * time.Second, Capacity: 100,
			Overflow: actor.OverflowDropOldest, MaxAttempts: 5,
			Backoff: actor.Backoff{Initial: 10 * time.Millisecond, Max: time.Second, Multiplier: 3, Jitter: 0.5},
			Timeout: 2 * time.Second, Grace: 3 * time.Second, DeadLetterRejected: true,
			Lease: 10 * time.Second, Heartbeat: 2 * time.Second},
		{Name: "mail", Line: 31},
	}
	if len(f.Actors) != len(wantActors) {
		t.Fatalf("got %d actors, want %d: %+v", len(f.Actors), len(wantActors), f.Actors)
	}
	for i, want := range wantActors {
		if f.Actors[i] != want {
			t.Errorf("actor %d:\n got %+v\nwant %+v", i, f.Actors[i], want)
		}
	}
	if p, ok := f.Pool("small"); !ok || p.Config.MaxObjects != 1 {
		t.Errorf(`Pool("small") = %+v, %v`, p, ok)
	}
	if _, ok := f.Pool("nope"); ok {
		t.Error(`Pool("nope") found a pool`)
	}
	if a, ok := f.Actor("audit"); !ok || a.MaxWorkers != 8 {
		t.Errorf(`Actor("audit") = %+v, %v`, a, ok)
	}
	if _, ok := f.Actor("nope"); ok {
		t.Error(`Actor("nope") found an actor`)
	}
}

// TestActorConfig proves that ActorConfig carries every setting into an
// actor.Config that actor.New accepts.
func TestActorConfig(t *testing.T) {
	f, err := Parse("full.yaml", []byte(full), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.Actor("audit")
	got := ActorConfig[string](a)
	want := actor.Config[string]{
		MinWorkers: 1, MaxWorkers: 8, KeepAlive: 30 * time.Second, Capacity: 100,
		Overflow: actor.OverflowDropOldest, MaxAttempts: 5,
		Backoff: actor.Backoff{Initial: 10 * time.Millisecond, Max: time.Second, Multiplier: 3, Jitter: 0.5},
		Timeout: 2 * time.Second, Grace: 3 * time.Second, DeadLetterRejected: true,
	}
	if got.Workers != want.Workers || got.MinWorkers != want.MinWorkers || got.MaxWorkers != want.MaxWorkers ||
		got.KeepAlive != want.KeepAlive || got.Capacity != want.Capacity || got.Overflow != want.Overflow ||
		got.MaxAttempts != want.MaxAttempts || got.Backoff != want.Backoff || got.Timeout != want.Timeout ||
		got.Grace != want.Grace || got.DeadLetterRejected != want.DeadLetterRejected {
		t.Errorf("ActorConfig:\n got %+v\nwant %+v", got, want)
	}
	act, err := actor.New("audit", func(context.Context, actor.Task[string]) error { return nil }, got)
	if err != nil {
		t.Fatalf("actor.New rejected the config: %v", err)
	}
	if err := act.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestMergeKeys proves that a merge key brings in an anchor's settings and
// that the entry's own settings override them.
func TestMergeKeys(t *testing.T) {
	const doc = `
x-base: &base
  max_objects: 4
  create_timeout: 1s
x-more: &more
  max_objects: 99
  test_timeout: 2s
pools:
  a:
    <<: *base
    create_timeout: 3s
  b:
    <<: [*base, *more]
`
	f, err := Parse("merge.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.Pool("a")
	if a.Config.MaxObjects != 4 || a.Config.CreateTimeout != 3*time.Second {
		t.Errorf("a = %+v, want max_objects 4 from the anchor, create_timeout 3s of its own", a.Config)
	}
	b, _ := f.Pool("b")
	if b.Config.MaxObjects != 4 || b.Config.TestTimeout != 2*time.Second || b.Config.CreateTimeout != time.Second {
		t.Errorf("b = %+v, want max_objects 4 (first anchor wins), test_timeout 2s, create_timeout 1s", b.Config)
	}
}

// TestProblems proves that each kind of mistake is reported with its line,
// column, setting and rule, and that every problem of a file is reported at
// once.
func TestProblems(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		env  []string
		want []string
	}{
		{
			name: "syntax error",
			doc:  "pools:\n  a: [1,\n",
			want: []string{"f.yaml:2: not valid YAML: did not find expected node content"},
		},
		{
			name: "empty file",
			doc:  "",
			want: []string{"f.yaml:1: the file is empty: declare pools under \"pools:\" and actors under \"actors:\""},
		},
		{
			name: "only comments",
			doc:  "# pools:\n#   a: {max_objects: 1}\n",
			want: []string{"f.yaml:1: the file is empty: declare pools under \"pools:\" and actors under \"actors:\""},
		},
		{
			name: "nothing declared",
			doc:  "pools:\nactors: {}\n",
			want: []string{"f.yaml:1:1: the file declares no pools and no actors"},
		},
		{
			name: "not a mapping",
			doc:  "- pools\n",
			want: []string{`f.yaml:1:1: the file must be a mapping with the keys "pools" and "actors"`},
		},
		{
			name: "unknown section",
			doc:  "pool:\n  a: {max_objects: 1}\n",
			want: []string{`f.yaml:1:1: pool: unknown section "pool"; did you mean "pools"? (a key starting with x- is ignored, to hold anchors)`},
		},
		{
			name: "section not a mapping",
			doc:  "pools: [a, b]\n",
			want: []string{"f.yaml:1:8: pools: must be a mapping of names to settings"},
		},
		{
			name: "entry not a mapping",
			doc:  "pools:\n  a: 8\n",
			want: []string{"f.yaml:2:6: pools.a: must be a mapping of settings, such as {max_objects: 8}"},
		},
		{
			name: "bad names",
			doc:  "pools:\n  9lives: {max_objects: 1}\n  a b: {max_objects: 1}\n",
			want: []string{
				"f.yaml:2:3: pools.9lives: a name must start with a letter",
				`f.yaml:3:3: pools.a b: a name may hold letters, digits, '_' and '-', not ' '`,
			},
		},
		{
			name: "declared twice",
			doc:  "pools:\n  a: {max_objects: 1}\n  a: {max_objects: 2}\n",
			want: []string{"f.yaml:3:3: pools.a: is given twice (first on line 2)"},
		},
		{
			name: "setting given twice",
			doc:  "pools:\n  a:\n    max_objects: 1\n    max_objects: 2\n",
			want: []string{"f.yaml:4:5: pools.a.max_objects: is given twice (first on line 3)"},
		},
		{
			name: "nested setting given twice, in JSON",
			doc:  `{"actors": {"a": {"max_attempts": 2, "backoff": {"max": "1s", "max": "2s"}}}}`,
			want: []string{`f.yaml:1:63: actors.a.backoff.max: is given twice (first on line 1)`},
		},
		{
			name: "misspelt setting",
			doc:  "pools:\n  a:\n    max_objects: 1\n    maxIdleTime: 5s\n    max_objetcs: 2\n",
			want: []string{
				`f.yaml:4:5: pools.a.maxIdleTime: unknown setting "maxIdleTime"; did you mean "max_idle_time"?`,
				`f.yaml:5:5: pools.a.max_objetcs: unknown setting "max_objetcs"; did you mean "max_objects"?`,
			},
		},
		{
			name: "unknown setting far from any",
			doc:  "actors:\n  a:\n    colour: blue\n",
			want: []string{`f.yaml:3:5: actors.a.colour: unknown setting "colour"; known: workers, min_workers, max_workers, keep_alive, capacity, overflow, max_attempts, backoff, timeout, grace, dead_letter_rejected, lease, heartbeat`},
		},
		{
			name: "values of the wrong kind",
			doc: `pools:
  a:
    max_objects: eight
    max_idle_time: 5
    create_timeout: [1s]
    fifo: yes
    min_idle:
actors:
  b:
    overflow: wait
    max_attempts: 2
    backoff: {jitter: lots}
  c:
    backoff: 1s
`,
			want: []string{
				"f.yaml:3:18: pools.a.max_objects = eight: must be a whole number, such as 8",
				"f.yaml:4:20: pools.a.max_idle_time = 5: must be a duration with a unit, such as 5s, 250ms or 1m30s",
				"f.yaml:5:21: pools.a.create_timeout: must be a single value, not a list",
				"f.yaml:6:11: pools.a.fifo = yes: must be true or false",
				"f.yaml:7:14: pools.a.min_idle: must be a single value, not empty",
				"f.yaml:10:15: actors.b.overflow = wait: must be one of block, reject, drop-oldest, drop-newest",
				"f.yaml:12:23: actors.b.backoff.jitter = lots: must be a number, such as 0.2",
				"f.yaml:14:14: actors.c.backoff: must be a mapping of settings, such as {initial: 100ms, max: 5s}",
			},
		},
		{
			name: "pool rules",
			doc: `pools:
  a:
    min_idle: 3
  b:
    max_objects: 4
    min_idle: 5
    max_queue_size: -1
    leak_threshold: -1s
`,
			want: []string{
				"f.yaml:2:3: pools.a.max_objects: not set, but must be between 1 and 1048576",
				"f.yaml:6:15: pools.b.min_idle = 5: must not exceed max_objects (4)",
				"f.yaml:7:21: pools.b.max_queue_size = -1: must not be negative (zero means no limit)",
				"f.yaml:8:21: pools.b.leak_threshold = -1s: must not be negative (zero means never)",
			},
		},
		{
			name: "actor rules",
			doc: `actors:
  a:
    workers: 2
    max_workers: 4
  b:
    min_workers: 2
    overflow: reject
    backoff: {initial: 2s, max: 1s}
`,
			want: []string{
				"f.yaml:3:14: actors.a.workers = 2: must not be set with min_workers or max_workers: set workers for a fixed actor, or min_workers and max_workers for an elastic one, not both",
				"f.yaml:5:3: actors.b.max_workers: not set, but must be at least 1 when min_workers is set (2)",
				"f.yaml:7:15: actors.b.overflow = reject: must be block when capacity is zero: the other policies need a bounded mailbox",
				"f.yaml:8:5: actors.b.backoff: must be zero unless max_attempts is more than 1 (it is 0): no task is retried",
				"f.yaml:8:24: actors.b.backoff.initial = 2s: must not exceed backoff.max (1s)",
			},
		},
		{
			name: "bad merge",
			doc:  "pools:\n  a:\n    <<: 3\n    max_objects: 1\n",
			want: []string{"f.yaml:3:9: pools.a: a merge key (<<) must name a mapping, such as *defaults"},
		},
		{
			name: "override with a bad value",
			doc:  "pools:\n  a:\n    max_objects: 1\n",
			env:  []string{"ACTORPOOL_POOL_A_MAX_OBJECTS=lots", "ACTORPOOL_POOL_A_MIN_IDLE=2"},
			want: []string{
				"f.yaml:2:3: $ACTORPOOL_POOL_A_MIN_IDLE: pools.a.min_idle = 2: must not exceed max_objects (1)",
				"f.yaml:3:18: $ACTORPOOL_POOL_A_MAX_OBJECTS: pools.a.max_objects = lots: must be a whole number, such as 8",
			},
		},
		{
			name: "override without a unit or with a negative duration",
			doc:  "actors:\n  a:\n    timeout: 1s\n",
			env:  []string{"ACTORPOOL_ACTOR_A_TIMEOUT=5", "ACTORPOOL_ACTOR_A_GRACE=-1s"},
			want: []string{
				"f.yaml:2:3: $ACTORPOOL_ACTOR_A_GRACE: actors.a.grace = -1s: must not be negative (zero means the default, 1s)",
				"f.yaml:3:14: $ACTORPOOL_ACTOR_A_TIMEOUT: actors.a.timeout = 5: must be a duration with a unit, such as 5s, 250ms or 1m30s",
			},
		},
		{
			name: "override of no setting",
			doc:  "pools:\n  a:\n    max_objects: 1\nactors:\n  audit:\n",
			env: []string{
				"ACTORPOOL_POOL_A_MAXOBJECTS=2",
				"ACTORPOOL_ACTOR_AUDIT_COLOUR=blue",
				"ACTORPOOL_POOL_OTHER_MAX_OBJECTS=2", // for another file: no problem
				"ACTORPOOL_REDIS=127.0.0.1:6379",     // not an override
			},
			want: []string{
				"f.yaml:2:3: $ACTORPOOL_POOL_A_MAXOBJECTS: pools.a: the variable overrides no setting; did you mean $ACTORPOOL_POOL_A_MAX_OBJECTS?",
				"f.yaml:5:3: $ACTORPOOL_ACTOR_AUDIT_COLOUR: actors.audit: the variable overrides no setting; the settings are WORKERS, MIN_WORKERS, MAX_WORKERS, KEEP_ALIVE, CAPACITY, OVERFLOW, MAX_ATTEMPTS, BACKOFF_INITIAL, BACKOFF_MAX, BACKOFF_MULTIPLIER, BACKOFF_JITTER, TIMEOUT, GRACE, DEAD_LETTER_REJECTED, LEASE, HEARTBEAT",
			},
		},
		{
			name: "override of no setting, of the longer of two names",
			doc:  "pools:\n  a:\n    max_objects: 1\n  a_b:\n    max_objects: 1\n",
			env:  []string{"ACTORPOOL_POOL_A_B_COLOUR=blue", "ACTORPOOL_POOL_A_COLOUR=red"},
			want: []string{
				"f.yaml:2:3: $ACTORPOOL_POOL_A_COLOUR: pools.a: the variable overrides no setting; the settings are MAX_OBJECTS, MIN_IDLE, MIN_OBJECTS, MAX_IDLE_TIME, MAX_LIFETIME, LIFETIME_JITTER, MAX_QUEUE_SIZE, CREATE_TIMEOUT, TEST_TIMEOUT, VALIDATION_INTERVAL, LEAK_THRESHOLD, TRACE_ACQUIRES, HANDOFF_AFTER, FIFO",
				"f.yaml:4:3: $ACTORPOOL_POOL_A_B_COLOUR: pools.a_b: the variable overrides no setting; the settings are MAX_OBJECTS, MIN_IDLE, MIN_OBJECTS, MAX_IDLE_TIME, MAX_LIFETIME, LIFETIME_JITTER, MAX_QUEUE_SIZE, CREATE_TIMEOUT, TEST_TIMEOUT, VALIDATION_INTERVAL, LEAK_THRESHOLD, TRACE_ACQUIRES, HANDOFF_AFTER, FIFO",
			},
		},
		{
			name: "leases",
			doc:  "actors:\n  a:\n    lease: -1s\n    heartbeat: -1s\n  b:\n    heartbeat: 3s\n  c:\n    lease: 10s\n    heartbeat: 6s\n  d:\n    lease: 10s\n    heartbeat: 5s\n",
			want: []string{
				"f.yaml:3:12: actors.a.lease = -1s: must not be negative (zero means the durable actor's default, 5s)",
				"f.yaml:4:16: actors.a.heartbeat = -1s: must not be negative (zero means a third of the lease)",
				"f.yaml:6:16: actors.b.heartbeat = 3s: must not exceed half the lease (5s), so that a lease is renewed before it runs out",
				"f.yaml:9:16: actors.c.heartbeat = 6s: must not exceed half the lease (10s), so that a lease is renewed before it runs out",
			},
		},
		{
			name: "lease from the environment",
			doc:  "actors:\n  a:\n    lease: 10s\n    heartbeat: 4s\n",
			env:  []string{"ACTORPOOL_ACTOR_A_LEASE=6s"},
			want: []string{"f.yaml:4:16: actors.a.heartbeat = 4s: must not exceed half the lease (6s), so that a lease is renewed before it runs out"},
		},
		{
			name: "names whose overrides collide",
			doc:  "actors:\n  a:\n  a_max:\n",
			want: []string{"f.yaml:3:3: actors.a_max.workers: cannot be overridden: $ACTORPOOL_ACTOR_A_MAX_WORKERS would also set actors.a.max_workers; rename one of the two"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("f.yaml", []byte(tt.doc), tt.env)
			if err == nil {
				t.Fatalf("Parse succeeded with %+v; want problems", f)
			}
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("error %T %v is not a *config.Error", err, err)
			}
			var got []string
			for _, p := range cerr.Problems {
				got = append(got, p.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestOverrides proves that variables replace what the file says, and set
// what it leaves out, nested settings included.
func TestOverrides(t *testing.T) {
	const doc = "pools:\n  web-api:\n    max_objects: 4\nactors:\n  audit:\n    max_attempts: 3\n"
	env := []string{
		"ACTORPOOL_POOL_WEB_API_MAX_OBJECTS=32",
		"ACTORPOOL_POOL_WEB_API_MAX_IDLE_TIME=90s",
		"ACTORPOOL_ACTOR_AUDIT_BACKOFF_INITIAL=5ms",
		"ACTORPOOL_ACTOR_AUDIT_OVERFLOW=block",
		"PATH=/bin",
	}
	f, err := Parse("f.yaml", []byte(doc), env)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := f.Pool("web-api")
	if p.Config.MaxObjects != 32 || p.Config.MaxIdleTime != 90*time.Second {
		t.Errorf("pool = %+v, want max_objects 32 and max_idle_time 90s from the environment", p.Config)
	}
	a, _ := f.Actor("audit")
	if a.Backoff.Initial != 5*time.Millisecond || a.MaxAttempts != 3 {
		t.Errorf("actor = %+v, want backoff.initial 5ms from the environment and max_attempts 3 from the file", a)
	}
}

// TestLoadUsesTheEnvironment proves that Load reads the process's
// environment.
func TestLoadUsesTheEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pools.yaml")
	if err := os.WriteFile(path, []byte("pools:\n  db:\n    max_objects: 4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ACTORPOOL_POOL_DB_MAX_OBJECTS", "12")
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := f.Pool("db"); p.Config.MaxObjects != 12 {
		t.Errorf("max_objects = %d, want 12 from $ACTORPOOL_POOL_DB_MAX_OBJECTS", p.Config.MaxObjects)
	}
	if f.Path != path {
		t.Errorf("Path = %q, want %q", f.Path, path)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want an error matching fs.ErrNotExist", err)
	}
}

// TestExampleFile proves that the example shipped in examples/ is valid and
// sets every setting a file can hold, so that it documents them all.
func TestExampleFile(t *testing.T) {
	path := filepath.Join("..", "examples", "actorpool.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(path, data, nil); err != nil {
		t.Fatal(err)
	}
	for _, l := range leaves(poolSettings, "") {
		if !strings.Contains(string(data), l.path+":") {
			t.Errorf("%s does not show the pool setting %s", path, l.path)
		}
	}
	for _, l := range leaves(actorSettings, "") {
		key := l.path[strings.LastIndex(l.path, ".")+1:]
		if !strings.Contains(string(data), key+":") {
			t.Errorf("%s does not show the actor setting %s", path, l.path)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	e := &Error{File: "f.yaml", Problems: []*Problem{
		{File: "f.yaml", Line: 3, Column: 5, Field: "pools.a.fifo", Value: "yes", Set: true, Rule: "must be true or false"},
		{File: "f.yaml", Line: 4, Field: "pools.a.max_idle_time", Value: " 5s", Set: true, Rule: "r"},
		{File: "f.yaml", Rule: "the file is empty"},
	}}
	want := "config: 3 problems in f.yaml:\n" +
		"\tf.yaml:3:5: pools.a.fifo = yes: must be true or false\n" +
		"\tf.yaml:4: pools.a.max_idle_time = \" 5s\": r\n" +
		"\tf.yaml: the file is empty"
	if got := e.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	var p *Problem
	if !errors.As(error(e), &p) || p.Line != 3 {
		t.Errorf("errors.As found %+v, want the first problem", p)
	}
}

// TestAliasesBounded: aliases and merge keys let a small file bring the
// same mapping in many times. A file that does so beyond a multiple of its
// size gets one problem that says so, rather than work and problems in the
// square of its size; a file that merges a mapping of every setting into a
// hundred entries is well within the bound.
func TestAliasesBounded(t *testing.T) {
	// 1000 pools merge a mapping of 1000 unknown keys: a million problems
	// without the bound, from a file of 40 kB.
	var b strings.Builder
	b.WriteString("x-big: &big\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  key_%d: 1\n", i)
	}
	b.WriteString("pools:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  p%d: {<<: *big}\n", i)
	}
	p := &parser{file: &File{Path: "big.yaml"}, fuel: fuelPerByte*b.Len() + fuelBase}
	p.parse([]byte(b.String()))
	last := p.problems[len(p.problems)-1]
	if !p.out || len(p.problems) != maxProblems+1 || !strings.Contains(last.Rule, "more than 1000 problems") {
		t.Fatalf("%d problems, the last %v; want 1000 and one that says the rest was not checked", len(p.problems), last)
	}

	// Brought in without problems — a mapping that gives one setting a
	// thousand times, the first of which wins — the same runs out of fuel.
	b.Reset()
	b.WriteString("x-big: &big\n")
	for range 1000 {
		b.WriteString("  max_objects: 1\n")
	}
	b.WriteString("pools:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  p%d: {<<: *big}\n", i)
	}
	p = &parser{file: &File{Path: "big.yaml"}, fuel: fuelPerByte*b.Len() + fuelBase}
	p.parse([]byte(b.String()))
	last = p.problems[len(p.problems)-1]
	if !p.out || !strings.Contains(last.Rule, "merge keys (<<) bring in more than 32 times its size") {
		t.Fatalf("the fuel did not run out; last problem: %v", last)
	}

	// A hundred pools and actors merge every setting.
	b.Reset()
	b.WriteString("x-pool: &pool\n")
	for _, l := range leaves(poolSettings, "") {
		fmt.Fprintf(&b, "  %s: %s\n", l.path, map[bool]string{true: "true", false: "1s"}[strings.Contains("trace_acquires fifo", l.path)])
	}
	b.WriteString("x-actor: &actor\n  workers: 2\n  capacity: 10\n  overflow: block\n  max_attempts: 3\n  backoff: {initial: 1ms, max: 1s, multiplier: 2, jitter: 0.1}\n  timeout: 1s\n  grace: 1s\n  dead_letter_rejected: true\n")
	b.WriteString("pools:\n")
	for i := range 100 {
		fmt.Fprintf(&b, "  p%d:\n    <<: *pool\n    max_objects: 8\n    min_idle: 1\n    min_objects: 1\n    max_queue_size: 5\n", i)
	}
	b.WriteString("actors:\n")
	for i := range 100 {
		fmt.Fprintf(&b, "  a%d: {<<: *actor}\n", i)
	}
	p = &parser{file: &File{Path: "many.yaml"}, fuel: fuelPerByte*b.Len() + fuelBase}
	p.parse([]byte(b.String()))
	if len(p.problems) > 0 {
		t.Fatalf("problems: %v", (&Error{Problems: p.problems}).Error())
	}
	if spent := fuelPerByte*b.Len() + fuelBase - p.fuel; spent > 20*b.Len() {
		t.Errorf("a file of %d bytes spent %d, %.1f times its size; the doc of fuelPerByte says less than 20", b.Len(), spent, float64(spent)/float64(b.Len()))
	} else {
		t.Logf("a file of %d bytes spent %d, %.1f times its size", b.Len(), spent, float64(spent)/float64(b.Len()))
	}
}
