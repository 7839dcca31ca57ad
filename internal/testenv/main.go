package testenv

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// RunSkippingExamples runs an adapter's tests, as its TestMain, leaving
// out its examples, which talk to a real server, when variable (PostgresVar
// or RedisVar) is unset; the tests skip themselves, each with a message.
// server says what the variable names, such as "a PostgreSQL server", and
// example a value for it.
func RunSkippingExamples(m *testing.M, pkg, variable, server, example string) int {
	flag.Parse()
	if os.Getenv(variable) == "" {
		skip := "^Example"
		if s := flag.Lookup("test.skip").Value.String(); s != "" {
			skip = s + "|" + skip
		}
		flag.Set("test.skip", skip)
		fmt.Fprintf(os.Stderr, "%s: examples not run: set %s=%s (%s) or run bash .ci/run\n", pkg, variable, example, server)
	}
	return m.Run()
}
