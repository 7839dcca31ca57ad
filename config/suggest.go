package config

import (
	"fmt"
	"strings"
)

// unknown says that name is not one of known, suggesting the closest when
// it looks like a misspelling of it.
func unknown(what, name string, known []string) string {
	if best := closest(name, known); best != "" {
		return fmt.Sprintf("unknown %s %q; did you mean %q?", what, name, best)
	}
	return fmt.Sprintf("unknown %s %q; known: %s", what, name, strings.Join(known, ", "))
}

// closest returns the name of known that name most likely misspells, or ""
// if none is close: the same letters in another case or with other
// separators (maxObjects, MAX-OBJECTS), the start of one (max_queue), or an
// edit distance of at most a third of the name's length.
func closest(name string, known []string) string {
	norm := func(s string) string {
		return strings.ToLower(strings.NewReplacer("_", "", "-", "", ".", "", " ", "").Replace(s))
	}
	best, bestDist := "", len(name)/3+1
	for _, k := range known {
		if norm(k) == norm(name) {
			return k
		}
	}
	for _, k := range known {
		if len(name) >= 4 && strings.HasPrefix(norm(k), norm(name)) {
			return k
		}
	}
	for _, k := range known {
		if d := distance(strings.ToLower(name), k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
