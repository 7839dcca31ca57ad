package pgpool_test

import (
	"os"
	"testing"

	"github.com/actorpool/actorpool/internal/testenv"
)

// TestMain leaves out the examples, which talk to a real PostgreSQL, when
// ACTORPOOL_POSTGRES is unset.
func TestMain(m *testing.M) {
	os.Exit(testenv.RunSkippingExamples(m, "pgpool", testenv.PostgresVar, "a PostgreSQL server", testenv.PostgresExample))
}
