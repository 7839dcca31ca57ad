package config

import (
	"errors"
	"strings"
	"testing"
)

// TestOutOfRangeValues checks the rule given for a number or a duration
// too far from zero for its field's type: the field's own range where it
// has one, as for a value its type holds, and the type's where that is all
// there is. Before the fix every such value got its type's, int64's or
// float64's, range: max_objects "must not exceed 9223372036854775807"
// rather than "must be between 1 and 1048576", jitter "must not be below
// -1.79e+308" rather than "must be between 0 and 1". Another setting's
// rule that names the value names it as written, not as the nearest the
// type holds.
func TestOutOfRangeValues(t *testing.T) {
	const big, small = "99999999999999999999", "-99999999999999999999"
	tests := []struct {
		name, doc string
		env       []string
		want      string
	}{
		{"bounded above", "pools:\n  a:\n    max_objects: " + big + "\n", nil,
			"f.yaml:3:18: pools.a.max_objects = " + big + ": must be between 1 and 1048576"},
		{"bounded below", "pools:\n  a:\n    max_objects: " + small + "\n", nil,
			"f.yaml:3:18: pools.a.max_objects = " + small + ": must be between 1 and 1048576"},
		{"workers", "actors:\n  a:\n    workers: " + big + "\n", nil,
			"f.yaml:3:14: actors.a.workers = " + big + ": must not exceed 1048576: the workers are goroutines, started as they are needed"},
		{"capacity", "actors:\n  a:\n    capacity: " + big + "\n", nil,
			"f.yaml:3:15: actors.a.capacity = " + big + ": must not exceed 16777216: a bounded mailbox is allocated whole when the actor starts (zero means unbounded)"},
		{"not negative", "actors:\n  a:\n    capacity: " + small + "\n", nil,
			"f.yaml:3:15: actors.a.capacity = " + small + ": must not be negative (zero means unbounded)"},
		{"bounded by another", "pools:\n  a:\n    max_objects: 4\n    min_idle: " + big + "\n", nil,
			"f.yaml:4:15: pools.a.min_idle = " + big + ": must not exceed max_objects (4)"},
		{"unbounded", "pools:\n  a:\n    max_objects: 1\n    max_queue_size: " + big + "\n", nil,
			"f.yaml:4:21: pools.a.max_queue_size = " + big + ": is out of range: must not exceed 9223372036854775807"},
		{"variable", "pools:\n  a:\n    max_objects: 1\n", []string{"ACTORPOOL_POOL_A_MAX_OBJECTS=" + big},
			"f.yaml:3:18: $ACTORPOOL_POOL_A_MAX_OBJECTS: pools.a.max_objects = " + big + ": must be between 1 and 1048576"},
		{"variable, unbounded", "pools:\n  a:\n    max_objects: 1\n", []string{"ACTORPOOL_POOL_A_MAX_QUEUE_SIZE=" + big},
			"f.yaml:2:3: $ACTORPOOL_POOL_A_MAX_QUEUE_SIZE: pools.a.max_queue_size = " + big + ": is out of range: must not exceed 9223372036854775807"},
		{"replaced by a variable", "pools:\n  a:\n    max_objects: " + big + "\n", []string{"ACTORPOOL_POOL_A_MAX_OBJECTS=2"}, ""},
		{"duration, unbounded", "actors:\n  a:\n    timeout: 3000000h\n", nil,
			"f.yaml:3:14: actors.a.timeout = 3000000h: is out of range: must not exceed 2562047h47m16.854775807s"},
		{"duration, not negative", "actors:\n  a:\n    timeout: -3000000h\n", nil,
			"f.yaml:3:14: actors.a.timeout = -3000000h: must not be negative (zero means no timeout)"},
		{"duration, bounded by another", "actors:\n  a:\n    heartbeat: 3000000h\n", nil,
			"f.yaml:3:16: actors.a.heartbeat = 3000000h: must not exceed half the lease (5s), so that a lease is renewed before it runs out"},
		{"named in another's rule", "actors:\n  a:\n    max_attempts: " + small + "\n    backoff: {initial: 1s}\n", nil,
			"f.yaml:3:19: actors.a.max_attempts = " + small + ": must not be negative (zero means one)\n" +
				"f.yaml:4:5: actors.a.backoff: must be zero unless max_attempts is more than 1 (it is " + small + "): no task is retried"},
		{"duration named in another's rule", "actors:\n  a:\n    lease: 3000000h\n    heartbeat: 3000000h\n", nil,
			"f.yaml:3:12: actors.a.lease = 3000000h: is out of range: must not exceed 2562047h47m16.854775807s\n" +
				"f.yaml:4:16: actors.a.heartbeat = 3000000h: must not exceed half the lease (3000000h), so that a lease is renewed before it runs out"},
		{"number, unbounded", "actors:\n  a:\n    max_attempts: 2\n    backoff: {multiplier: 1e400}\n", nil,
			"f.yaml:4:27: actors.a.backoff.multiplier = 1e400: is out of range: must not exceed 1.7976931348623157e+308"},
		{"number, bounded", "actors:\n  a:\n    max_attempts: 2\n    backoff: {jitter: -1e400}\n", nil,
			"f.yaml:4:23: actors.a.backoff.jitter = -1e400: must be between 0 and 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := problemsOf(t, tt.doc, tt.env...); got != tt.want {
				t.Errorf("problems:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// problemsOf returns the problems Parse reports for doc, one a line; ""
// if it reports none.
func problemsOf(t *testing.T, doc string, env ...string) string {
	t.Helper()
	_, err := Parse("f.yaml", []byte(doc), env)
	if err == nil {
		return ""
	}
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("Parse(%q): %T %v is not a *config.Error", doc, err, err)
	}
	var lines []string
	for _, p := range cerr.Problems {
		lines = append(lines, p.Error())
	}
	return strings.Join(lines, "\n")
}

// TestNumbersAreNotStrings: a number or a boolean written as a string —
// "8" in YAML or in JSON, or tagged !!str — is a string to YAML and to
// every program that reads the file with it, and is refused, with the
// quotes shown. Before the fix it was read as the number. What YAML reads
// as the setting's type is taken, as are strings where a setting is one.
func TestNumbersAreNotStrings(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"quoted whole number", "actors:\n  a:\n    workers: \"8\"\n",
			`f.yaml:3:14: actors.a.workers = "8": must be a whole number, such as 8, not a string: write it without quotes`},
		{"single-quoted whole number", "actors:\n  a:\n    capacity: '100'\n",
			`f.yaml:3:15: actors.a.capacity = "100": must be a whole number, such as 8, not a string: write it without quotes`},
		{"JSON string", `{"actors": {"a": {"workers": "8"}}}`,
			`f.yaml:1:30: actors.a.workers = "8": must be a whole number, such as 8, not a string: write it without quotes`},
		{"quoted number", "actors:\n  a:\n    max_attempts: 2\n    backoff: {multiplier: \"2\"}\n",
			`f.yaml:4:27: actors.a.backoff.multiplier = "2": must be a number, such as 0.2, not a string: write it without quotes`},
		{"quoted boolean", "pools:\n  a:\n    max_objects: 1\n    fifo: \"true\"\n",
			`f.yaml:4:11: pools.a.fifo = "true": must be true or false, not a string: write it without quotes`},
		{"tagged string", "actors:\n  a:\n    workers: !!str 8\n",
			`f.yaml:3:14: actors.a.workers = 8: must be a whole number, such as 8, not a value tagged !!str`},
		{"tagged float for a whole number", "actors:\n  a:\n    workers: !!float 8\n",
			`f.yaml:3:14: actors.a.workers = 8: must be a whole number, such as 8, not a value tagged !!float`},
		{"tagged whole number", "actors:\n  a:\n    workers: !!int \"8\"\n", ""},
		{"quoted duration and policy", "actors:\n  a:\n    capacity: 1\n    timeout: \"5s\"\n    overflow: 'reject'\n", ""},
		{"JSON", `{"pools": {"p": {"max_objects": 8, "create_timeout": "2s", "fifo": true}}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := problemsOf(t, tt.doc); got != tt.want {
				t.Errorf("problems:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestLeadingZeros: YAML 1.1, and yaml.v3 with it, reads 010 as octal, 8;
// YAML 1.2 reads it as 10. Before the fix workers: 010 gave 8 workers and
// multiplier: 010 a multiplier of 10, one file read two ways. A leading
// zero is refused, in the file and in a variable, with the spellings that
// mean one number: 10, or 0o10 for octal.
func TestLeadingZeros(t *testing.T) {
	tests := []struct {
		name, doc string
		env       []string
		want      string
	}{
		{"octal-looking", "actors:\n  a:\n    workers: 010\n", nil,
			"f.yaml:3:14: actors.a.workers = 010: must not start with 0, which marks octal in YAML 1.1 but not in 1.2: write 10, or 0o10 for octal"},
		{"a file mode", "actors:\n  a:\n    capacity: 0755\n", nil,
			"f.yaml:3:15: actors.a.capacity = 0755: must not start with 0, which marks octal in YAML 1.1 but not in 1.2: write 755, or 0o755 for octal"},
		{"negative", "pools:\n  a:\n    max_objects: 1\n    max_queue_size: -0_10\n", nil,
			"f.yaml:4:21: pools.a.max_queue_size = -0_10: must not start with 0, which marks octal in YAML 1.1 but not in 1.2: write -10, or -0o10 for octal"},
		{"not octal", "actors:\n  a:\n    workers: 09\n", nil,
			"f.yaml:3:14: actors.a.workers = 09: must not start with 0, which marks octal in YAML 1.1 but not in 1.2: write 9"},
		{"one digit", "actors:\n  a:\n    workers: 07\n", nil,
			"f.yaml:3:14: actors.a.workers = 07: must not start with 0, which marks octal in YAML 1.1 but not in 1.2: write 7"},
		{"zeros", "actors:\n  a:\n    workers: 00\n", nil,
			"f.yaml:3:14: actors.a.workers = 00: must not start with 0, which marks octal in YAML 1.1 but not in 1.2: write 0"},
		{"number", "actors:\n  a:\n    max_attempts: 2\n    backoff: {multiplier: 010}\n", nil,
			"f.yaml:4:27: actors.a.backoff.multiplier = 010: must not start with 0, which marks octal in YAML 1.1 but not in 1.2: write 10"},
		{"variable", "actors:\n  a:\n    workers: 2\n", []string{"ACTORPOOL_ACTOR_A_WORKERS=010"},
			"f.yaml:3:14: $ACTORPOOL_ACTOR_A_WORKERS: actors.a.workers = 010: must not start with 0, which marks octal in YAML 1.1 but not in 1.2: write 10, or 0o10 for octal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := problemsOf(t, tt.doc, tt.env...); got != tt.want {
				t.Errorf("problems:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}

	// What reads one way only is taken.
	f, err := Parse("f.yaml", []byte("actors:\n  a:\n    workers: 0o10\n    capacity: 0x10\n    max_attempts: 0\n  b:\n    max_attempts: 2\n    backoff: {multiplier: 01.5, jitter: 0.5}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := f.Actor("a"); a.Workers != 8 || a.Capacity != 16 {
		t.Errorf("workers: 0o10, capacity: 0x10 gave %d and %d, want 8 and 16", a.Workers, a.Capacity)
	}
	if b, _ := f.Actor("b"); b.Backoff.Multiplier != 1.5 || b.Backoff.Jitter != 0.5 {
		t.Errorf("multiplier: 01.5, jitter: 0.5 gave %v and %v", b.Backoff.Multiplier, b.Backoff.Jitter)
	}
}
