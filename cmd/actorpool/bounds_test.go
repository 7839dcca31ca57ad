package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDemoCountBounds proves that a count too large for the demo is a
// usage error that names the flag and its range, before anything starts:
// --workers past what the actor and its pool take (the pool has two more
// connections against PostgreSQL), and --clients past a million, which
// would start that many goroutines and keep a 1s run going for minutes.
func TestDemoCountBounds(t *testing.T) {
	pg := "postgres://u@127.0.0.1:1/db"
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"demo", "--workers", "2000000"}, exitUsage, "--workers 2000000: must be between 1 and 1048576"},
		{[]string{"demo", "--workers", "1048576"}, -1, ""},
		{[]string{"demo", "--postgres", pg, "--workers", "1048576"}, exitUsage, "--workers 1048576: must be between 1 and 1048574"},
		{[]string{"demo", "--postgres", pg, "--workers", "1048574"}, -1, ""},
		{[]string{"demo", "--clients", "100000000"}, exitUsage, "--clients 100000000: must be between 1 and 1048576"},
		{[]string{"demo", "--clients", "1048576"}, -1, ""},
	} {
		var stdout, stderr bytes.Buffer
		code := parse(tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d with %q", tt.args, code, stderr.String(), tt.code, tt.want)
		}
	}
}
