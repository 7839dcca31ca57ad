package config

import (
	"errors"
	"strings"
	"testing"
)

// TestOutOfRangeValues checks the rule given for a number or a duration
// too large for its field: it says so and what the largest is, rather than
// that the value is not a number or has no unit.
func TestOutOfRangeValues(t *testing.T) {
	tests := []struct{ doc, want string }{
		{"actors:\n  a:\n    capacity: 99999999999999999999\n",
			"f.yaml:3:15: actors.a.capacity = 99999999999999999999: is out of range: must not exceed 9223372036854775807"},
		{"actors:\n  a:\n    capacity: -99999999999999999999\n",
			"f.yaml:3:15: actors.a.capacity = -99999999999999999999: is out of range: must not be below -9223372036854775808"},
		{"actors:\n  a:\n    timeout: 3000000h\n",
			"f.yaml:3:14: actors.a.timeout = 3000000h: is out of range: must not exceed 2562047h47m16.854775807s"},
		{"actors:\n  a:\n    timeout: -3000000h\n",
			"f.yaml:3:14: actors.a.timeout = -3000000h: is out of range: must not be below -2562047h47m16.854775808s"},
		{"actors:\n  a:\n    max_attempts: 2\n    backoff: {multiplier: 1e400}\n",
			"f.yaml:4:27: actors.a.backoff.multiplier = 1e400: is out of range: must not exceed 1.7976931348623157e+308"},
		{"actors:\n  a:\n    max_attempts: 2\n    backoff: {jitter: -1e400}\n",
			"f.yaml:4:23: actors.a.backoff.jitter = -1e400: is out of range: must not be below -1.7976931348623157e+308"},
	}
	for _, tt := range tests {
		_, err := Parse("f.yaml", []byte(tt.doc), nil)
		var cerr *Error
		if !errors.As(err, &cerr) || len(cerr.Problems) != 1 || cerr.Problems[0].Error() != tt.want {
			t.Errorf("Parse(%q) = %v\nwant the problem %s", tt.doc, err, tt.want)
		}
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
