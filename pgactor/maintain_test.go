package pgactor

import (
	"testing"
	"time"
)

func TestTableCare(t *testing.T) {
	const never = 1e6 * time.Second
	tests := []struct {
		name                string
		dead, live, changed int64
		sinceAnalyze        time.Duration
		vacuum, analyze     bool
	}{
		{"quiet", 10, 100, 10, never, false, false},
		{"few dead rows", vacuumMinDead, 0, 0, never, false, false},
		{"dead rows past the floor", vacuumMinDead + 1, 0, 0, never, true, false},
		{"dead rows under a fifth of the live", 1500, 10000, 0, never, false, false},
		{"dead rows over a fifth of the live", 2500, 10000, 0, never, true, false},
		{"changed, never analyzed", 0, 10000, 1500, never, false, true},
		{"changed, under a tenth", 0, 100000, 5000, never, false, false},
		{"changed, analyzed just now", 0, 10000, 1500, time.Second, false, false},
		{"changed, analyzed a while ago", 0, 10000, 1500, analyzeEvery, false, true},
		// A busy queue: its rows die and change by the thousand every
		// round; VACUUM every round, ANALYZE once a minute.
		{"busy, analyzed just now", 30000, 20000, 60000, 10 * time.Second, true, false},
		{"busy, analyzed a minute ago", 30000, 20000, 60000, analyzeEvery, true, true},
	}
	for _, tt := range tests {
		vacuum, analyze := tableCare(tt.dead, tt.live, tt.changed, tt.sinceAnalyze)
		if vacuum != tt.vacuum || analyze != tt.analyze {
			t.Errorf("%s: tableCare(%d, %d, %d, %v) = %v, %v; want %v, %v",
				tt.name, tt.dead, tt.live, tt.changed, tt.sinceAnalyze, vacuum, analyze, tt.vacuum, tt.analyze)
		}
	}
}
