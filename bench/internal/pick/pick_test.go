package pick

import (
	"slices"
	"strings"
	"testing"
)

func TestNamed(t *testing.T) {
	all := []string{"a", "b", "c"}
	id := func(s string) string { return s }
	for _, tc := range []struct {
		list string
		want []string
		err  string
	}{
		{"", all, ""},
		{"  ", all, ""},
		{"c, a", []string{"a", "c"}, ""},
		{"b", []string{"b"}, ""},
		{"a,d", nil, `no pool named "d"; the pools are a, b, c`},
	} {
		got, err := Named(all, id, tc.list, "pool")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Named(%q) error = %v, want %q", tc.list, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Named(%q) = %v, %v; want %v", tc.list, got, err, tc.want)
		}
	}
}
