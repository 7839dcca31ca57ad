package redispool_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/actorpool/actorpool/internal/testenv"
)

// TestMain leaves out the examples, which talk to a real Redis, when
// ACTORPOOL_REDIS is unset; the tests skip themselves, each with a message.
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv(testenv.RedisVar) == "" {
		skip := "^Example"
		if s := flag.Lookup("test.skip").Value.String(); s != "" {
			skip = s + "|" + skip
		}
		flag.Set("test.skip", skip)
		fmt.Fprintf(os.Stderr, "redispool: examples not run: set %s=%s (a Redis server) or run bash .ci/run\n", testenv.RedisVar, testenv.RedisExample)
	}
	os.Exit(m.Run())
}
