package pgactor

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeSample proves that the README's sample of a durable actor is
// code that Example compiles and runs: its lines are lines of
// example_test.go, in the same order.
func TestReadmeSample(t *testing.T) {
	for _, heading := range []string{"## Durable actors", "## Operating durable actors", "### Snoozing a task"} {
		checkSample(t, heading)
	}
}

// checkSample checks that the first Go sample under heading in the README
// is lines of example_test.go, in the same order.
func checkSample(t *testing.T, heading string) {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n"+heading+"\n")
	_, sample, ok2 := strings.Cut(section, "\n```go\n")
	sample, _, ok3 := strings.Cut(sample, "\n```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("README.md has no Go sample under %q", heading)
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(example), "\n")
	next := 0
	for _, want := range strings.Split(sample, "\n") {
		want = strings.TrimSpace(want)
		if want == "" {
			continue
		}
		for next < len(lines) && strings.TrimSpace(lines[next]) != want {
			next++
		}
		if next == len(lines) {
			t.Fatalf("the README's sample under %q has %q, which example_test.go lacks (or has earlier): keep them in step", heading, want)
		}
		next++
	}
}
