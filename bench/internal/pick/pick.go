// Package pick chooses, from a comma-separated list of names given on a
// command line, the contenders of a comparison: the pools, executors or
// adapters that poolbench runs.
package pick

import (
	"fmt"
	"slices"
	"strings"
)

// Named returns the elements of all whose name is in list, a
// comma-separated list of names, in the order of all, or all of them for an
// empty list. A name that matches nothing is an error that lists the names
// there are; what says what the elements are, such as "pool".
func Named[C any](all []C, name func(C) string, list, what string) ([]C, error) {
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	want := strings.Split(list, ",")
	for i := range want {
		want[i] = strings.TrimSpace(want[i])
	}
	names := make([]string, len(all))
	for i, c := range all {
		names[i] = name(c)
	}
	for _, w := range want {
		if !slices.Contains(names, w) {
			return nil, fmt.Errorf("no %s named %q; the %ss are %s", what, w, what, strings.Join(names, ", "))
		}
	}
	var out []C
	for i, c := range all {
		if slices.Contains(want, names[i]) {
			out = append(out, c)
		}
	}
	return out, nil
}
