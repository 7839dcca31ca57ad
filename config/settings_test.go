package config

import (
	"errors"
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
