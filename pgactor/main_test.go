package pgactor

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/actorpool/actorpool/internal/testenv"
)

// TestMain leaves out the examples, which talk to a real PostgreSQL, when
// ACTORPOOL_POSTGRES is unset; the tests skip themselves, each with a
// message. Run as a chaos worker (see chaos_test.go), or a periodic one
// (periodic_test.go), it is that worker.
func TestMain(m *testing.M) {
	flag.Parse()
	if schema := os.Getenv(chaosEnv); schema != "" {
		chaosWorker(schema)
	}
	if schema := os.Getenv(periodicEnv); schema != "" {
		periodicWorker(schema)
	}
	if os.Getenv(testenv.PostgresVar) == "" {
		skip := "^Example"
		if s := flag.Lookup("test.skip").Value.String(); s != "" {
			skip = s + "|" + skip
		}
		flag.Set("test.skip", skip)
		fmt.Fprintf(os.Stderr, "pgactor: examples not run: set %s=%s (a PostgreSQL server) or run bash .ci/run\n", testenv.PostgresVar, testenv.PostgresExample)
	}
	os.Exit(m.Run())
}
