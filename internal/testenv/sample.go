package testenv

import (
	"os"
	"strings"
	"testing"
)

// CheckSample checks that the first Go sample under heading in the
// Markdown file readme is code that the tests compile and run: its lines
// are lines of the Go file example, in the same order, blank lines and
// indentation aside.
func CheckSample(t testing.TB, readme, heading, example string) {
	t.Helper()
	doc, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n"+heading+"\n")
	_, sample, ok2 := strings.Cut(section, "\n```go\n")
	sample, _, ok3 := strings.Cut(sample, "\n```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("%s has no Go sample under %q", readme, heading)
	}
	code, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(code), "\n")
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
			t.Fatalf("the sample under %q in %s has %q, which %s lacks (or has earlier): keep them in step", heading, readme, want, example)
		}
		next++
	}
}
