package redispool_test

import (
	"os"
	"testing"

	"github.com/actorpool/actorpool/internal/testenv"
)

// TestMain leaves out the examples, which talk to a real Redis, when
// ACTORPOOL_REDIS is unset.
func TestMain(m *testing.M) {
	os.Exit(testenv.RunSkippingExamples(m, "redispool", testenv.RedisVar, "a Redis server", testenv.RedisExample))
}
