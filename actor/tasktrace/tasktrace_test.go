package tasktrace

import "testing"

// TestOutcomeString checks the names the outcome attribute takes.
func TestOutcomeString(t *testing.T) {
	for _, c := range []struct {
		o    Outcome
		want string
	}{
		{OutcomeCompleted, "completed"},
		{OutcomeRetried, "retried"},
		{OutcomeDeadLettered, "dead_lettered"},
		{OutcomeCanceled, "canceled"},
		{OutcomeLost, "lost"},
		{OutcomeGivenBack, "given_back"},
		{OutcomeSnoozed, "snoozed"},
		{0, "Outcome(0)"},
		{8, "Outcome(8)"},
	} {
		if got := c.o.String(); got != c.want {
			t.Errorf("Outcome(%d).String() = %q, want %q", c.o, got, c.want)
		}
	}
}
