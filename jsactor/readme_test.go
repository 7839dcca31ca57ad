package jsactor

import (
	"testing"

	"github.com/actorpool/actorpool/internal/testenv"
)

// TestReadmeSample proves that the README's sample of a durable actor on
// JetStream is code that the examples compile and run.
func TestReadmeSample(t *testing.T) {
	testenv.CheckSample(t, "../README.md", "## Durable actors on NATS JetStream", "example_test.go")
}
