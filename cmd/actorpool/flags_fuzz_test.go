package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

// parse parses a command line as run does, without running what it asks
// for: the flags of demo, config check and migrate, and all of bench and
// help, which only print. It returns the exit code, or -1 where run would
// go on to run the command.
func parse(args []string, stdout, stderr *bytes.Buffer) int {
	if len(args) == 0 {
		return run(nil, nil, args, stdout, stderr)
	}
	switch args[0] {
	case "demo":
		_, code := parseDemo(args[1:], stdout, stderr)
		return code
	case "config":
		_, _, code := parseConfig(args[1:], stdout, stderr)
		return code
	case "migrate":
		_, _, code := parseMigrate(args[1:], stdout, stderr)
		return code
	case "console":
		_, code := parseConsole(args[1:], noEnv, stdout, stderr)
		return code
	}
	return run(nil, nil, args, stdout, stderr)
}

// noEnv is an environment without variables.
func noEnv(string) string { return "" }

// loopbackListen reports whether a checked listen address is a loopback one.
func loopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && loopback(host)
}

// FuzzFlags parses command lines of any arguments (separated by NUL bytes
// in args). Each ends in help on stdout (exit 0), a usage error on stderr
// that names the command (exit 2), or a command ready to run, with nothing
// said; the demo's flags, when ready, are in range.
func FuzzFlags(f *testing.F) {
	f.Fuzz(func(t *testing.T, args string) {
		argv := strings.Split(args, "\x00")
		if args == "" {
			argv = nil
		}
		var stdout, stderr bytes.Buffer
		code := parse(argv, &stdout, &stderr)
		out, errOut := stdout.String(), stderr.String()
		// A usage error quotes the argument it refuses, which may hold
		// "%!" itself: only more of them than the arguments hold is a
		// verb without its operand.
		if strings.Count(out+errOut, "%!") > strings.Count(args, "%!") {
			t.Errorf("a formatting mistake in the output:\n%s%s", out, errOut)
		}
		switch code {
		case exitOK:
			if out == "" || errOut != "" {
				t.Errorf("exit 0 with stdout %q and stderr %q; want help on stdout", out, errOut)
			}
		case exitUsage:
			if !strings.HasPrefix(errOut, "actorpool") {
				t.Errorf("exit 2 with stderr %q; want a message that names the command", errOut)
			}
		case -1:
			if out != "" || errOut != "" {
				t.Errorf("ready to run, yet said %q %q", out, errOut)
			}
			if argv[0] == "console" {
				c, _ := parseConsole(argv[1:], noEnv, &stdout, &stderr)
				if c.pool == nil || c.schema == "" || (c.token == "" && !loopbackListen(c.listen)) || (c.token != "" && len(c.token) < consoleMinToken) {
					t.Errorf("console ready to run with %+v: no database, no schema, or no token (of %d characters) on a non-loopback address", c, consoleMinToken)
				}
			}
			if argv[0] == "demo" {
				d, _ := parseDemo(argv[1:], &stdout, &stderr)
				if d.clients < 1 || d.duration <= 0 || d.size < 1 || d.workers < 1 || d.think < 0 {
					t.Errorf("demo flags out of range: %+v", d)
				}
				if d.jetstream.on && (d.postgres != "" || d.jetstream.url != "" && d.jsDir != "") {
					t.Errorf("demo ready to run on JetStream with --postgres, or with a URL and a store directory: %+v", d)
				}
			}
		default:
			t.Errorf("exit %d for %q", code, argv)
		}
	})
}
