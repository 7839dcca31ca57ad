package pgactor

import (
	"testing"

	"github.com/actorpool/actorpool/internal/testenv"
)

// TestReadmeSample proves that the README's samples of a durable actor
// are code that the examples compile and run: their lines are lines of
// example_test.go, in the same order.
func TestReadmeSample(t *testing.T) {
	for _, heading := range []string{"## Durable actors", "## Operating durable actors", "### Snoozing a task"} {
		testenv.CheckSample(t, "../README.md", heading, "example_test.go")
	}
}
