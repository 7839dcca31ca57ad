package console

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestTaskKey(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want TaskKey
		err  string
	}{
		{"42", TaskKey{ID: 42}, ""},
		{"mail:42", TaskKey{Actor: "mail", ID: 42}, ""},
		{"mail:dead:7", TaskKey{Actor: "mail", Dead: true, ID: 7}, ""},
		{"dead:7", TaskKey{Actor: "dead", ID: 7}, ""},
		{"dead:dead:7", TaskKey{Actor: "dead", Dead: true, ID: 7}, ""},
		{"a-b_c:18446744073709551615", TaskKey{Actor: "a-b_c", ID: 1<<64 - 1}, ""},
		{"", TaskKey{}, "must be a whole number 1 or more"},
		{"0", TaskKey{}, "must be a whole number 1 or more"},
		{"mail:0", TaskKey{}, "must be a whole number 1 or more"},
		{"mail:", TaskKey{}, "must be a whole number 1 or more"},
		{"mail:-1", TaskKey{}, "must be a whole number 1 or more"},
		{":42", TaskKey{}, "write an id (42), or an actor and an id"},
		{":dead:42", TaskKey{}, "write an id (42), or an actor and an id"},
		{"a:b:42", TaskKey{}, "write an id (42), or an actor and an id"},
		{"mail:live:42", TaskKey{}, "write an id (42), or an actor and an id"},
	} {
		got, err := ParseTaskKey(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseTaskKey(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ParseTaskKey(%q) = %v, %v; want %+v", tt.in, got, err, tt.want)
		case tt.err == "" && got.String() != tt.in:
			t.Errorf("ParseTaskKey(%q).String() = %q, want it back", tt.in, got.String())
		}
	}
	if !(TaskKey{}).IsZero() || (TaskKey{ID: 1}).IsZero() || (TaskKey{Actor: "a"}).IsZero() {
		t.Error("IsZero: want true for the zero key alone")
	}
}

func TestNotFound(t *testing.T) {
	base := errors.New("no such task")
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{NotFound(base), true},
		{fmt.Errorf("read: %w", NotFound(base)), true},
		{base, false},
		{nil, false},
	} {
		if got := IsNotFound(tt.err); got != tt.want {
			t.Errorf("IsNotFound(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
	if err := NotFound(base); err.Error() != base.Error() || !errors.Is(err, base) {
		t.Errorf("NotFound(%v) = %q, want the same message, wrapping it", base, err)
	}
}
