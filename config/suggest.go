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
	n := norm(name)
	for _, k := range known {
		if norm(k) == n {
			return k
		}
	}
	for _, k := range known {
		if len(name) >= 4 && strings.HasPrefix(norm(k), n) {
			return k
		}
	}
	best, bestDist := "", len(name)/3+1
	lower := strings.ToLower(name)
	for _, k := range known {
		// The distance is at least the difference of the lengths: a
		// name much longer than every setting's is far from all.
		if abs(len(lower)-len(k)) >= bestDist {
			continue
		}
		if d := distance(lower, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// separators are left out when names are compared.
var separators = strings.NewReplacer("_", "", "-", "", ".", "", " ", "")

// norm returns s without separators, in lower case.
func norm(s string) string { return strings.ToLower(separators.Replace(s)) }

func abs(n int) int { return max(n, -n) }

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
