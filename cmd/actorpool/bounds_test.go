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

// TestSchemaFlag proves that a --schema that PostgreSQL's actors cannot
// have is a usage error, naming the flag (and, unless empty, the rule),
// found before any server is tried: the same in migrate, console and
// demo.
func TestSchemaFlag(t *testing.T) {
	pg := "postgres://u@127.0.0.1:1/db"
	for _, cmd := range []string{"migrate", "console", "demo"} {
		for _, schema := range []string{"", "Jobs", "jobs-eu", "1jobs", strings.Repeat("j", 64)} {
			args := []string{cmd, "--postgres", pg, "--schema", schema}
			var stdout, stderr bytes.Buffer
			code := parse(args, &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), "actorpool "+cmd+": --schema") || schema != "" && !strings.Contains(stderr.String(), "lower-case letters, digits and underscores") {
				t.Errorf("%q: exit %d, stderr %q; want exit %d naming --schema and its rule", args, code, stderr.String(), exitUsage)
			}
		}
		var stdout, stderr bytes.Buffer
		if code := parse([]string{cmd, "--postgres", pg, "--schema", "jobs_2"}, &stdout, &stderr); code != -1 {
			t.Errorf("%s --schema jobs_2: exit %d, stderr %q; want it ready to run", cmd, code, stderr.String())
		}
	}
}

// TestConfigCheckHelp proves that help asked of config check, as of every
// command, prints its usage on stdout.
func TestConfigCheckHelp(t *testing.T) {
	for _, args := range [][]string{{"config", "-h"}, {"config", "check", "-h"}, {"config", "check", "--help"}} {
		var stdout, stderr bytes.Buffer
		code := parse(args, &stdout, &stderr)
		if code != exitOK || !strings.Contains(stdout.String(), "Usage: actorpool config check [--jetstream] FILE...") || stderr.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 0 with the usage on stdout", args, code, stdout.String(), stderr.String())
		}
	}
}
