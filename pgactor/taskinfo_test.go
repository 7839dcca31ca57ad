package pgactor

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestTaskFilterCheck checks which filters are refused, and that the
// error says what was wrong and what is allowed.
func TestTaskFilterCheck(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		name string
		f    TaskFilter
		want string // "" for accepted
	}{
		{"zero", TaskFilter{}, ""},
		{"every state, most rows", TaskFilter{States: taskStatesShown, Limit: MaxTaskLimit}, ""},
		{"since before until", TaskFilter{Since: now.Add(-time.Hour), Until: now}, ""},
		{"limit too big", TaskFilter{Limit: MaxTaskLimit + 1}, "Limit 1001: want 0 (for 100) to 1000"},
		{"limit negative", TaskFilter{Limit: -1}, "Limit -1: want 0 (for 100) to 1000"},
		{"unknown state", TaskFilter{States: []TaskState{TaskQueued, "done"}},
			`state "done": want one of queued, scheduled, retrying, running, canceling, dead`},
		{"since at until", TaskFilter{Since: now, Until: now}, "is not before Until"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.f.check()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("check() = %v, want nil", err)
			case tt.want != "" && (!errors.Is(err, ErrBadFilter) || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "pgactor: ")):
				t.Errorf("check() = %v, want ErrBadFilter saying %q", err, tt.want)
			}
		})
	}
}
