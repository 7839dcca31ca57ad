package otelpgactor_test

import (
	"testing"

	"github.com/actorpool/actorpool/internal/testenv"
)

// TestReadmeSample proves that the README's sample of tracing is code
// that Example compiles and runs: its lines are lines of example_test.go,
// in the same order.
func TestReadmeSample(t *testing.T) {
	testenv.CheckSample(t, "../../README.md", "### Tracing durable tasks", "example_test.go")
}
