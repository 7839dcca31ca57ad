package pgactor

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// TestParseSpec checks the specs the cron parser takes, where they fire
// next, and that it refuses malformed ones with an error naming the spec
// and what is allowed.
func TestParseSpec(t *testing.T) {
	at := utc("2026-03-04T10:20:30Z")
	for _, tc := range []struct {
		spec string
		next string // "" for refused
		err  string
	}{
		{spec: "@every 1h", next: "2026-03-04T11:00:00Z"},
		{spec: "@every 1s", next: "2026-03-04T10:20:31Z"},
		{spec: "@every 90m", next: "2026-03-04T10:30:00Z"}, // multiples of 90 minutes since the epoch
		{spec: "@hourly", next: "2026-03-04T11:00:00Z"},
		{spec: "@daily", next: "2026-03-05T00:00:00Z"},
		{spec: "@weekly", next: "2026-03-08T00:00:00Z"},
		{spec: "@monthly", next: "2026-04-01T00:00:00Z"},
		{spec: "*/15 * * * *", next: "2026-03-04T10:30:00Z"},
		{spec: "30 9 * * 1-5", next: "2026-03-05T09:30:00Z"},
		{spec: "CRON_TZ=Europe/Paris 0 12 * * *", next: "2026-03-04T11:00:00Z"},
		{spec: "", err: "empty spec"},
		{spec: "* * * *", err: "expected"},
		{spec: "61 * * * *", err: "61"},
		{spec: "@every 500ms", err: "at least 1s"},
		{spec: "@every 1.5s", err: "not a whole number of seconds"},
		{spec: "@every soon", err: "soon"},
		{spec: "@fortnightly", err: "unrecognized descriptor"},
	} {
		c, err := parseSpec(tc.spec)
		if tc.next == "" {
			var se *SpecError
			if !errors.As(err, &se) || se.Spec != tc.spec || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "want \"@every <duration>\"") {
				t.Errorf("parseSpec(%q): %v; want a *SpecError naming it, saying %q and what is allowed", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseSpec(%q): %v", tc.spec, err)
			continue
		}
		if got := c.next(at); !got.Equal(utc(tc.next)) {
			t.Errorf("%q: next after %v is %v, want %s", tc.spec, at, got, tc.next)
		}
	}
}

// TestPlan checks what the scheduler does with a due schedule: the period
// it sends, or none, and its next fire time, on time, late within a
// period, and after missed periods under each policy.
func TestPlan(t *testing.T) {
	hourly, _ := parseSpec("@every 1h")
	cronHourly, _ := parseSpec("0 * * * *")
	minutely, _ := parseSpec("* * * * *")
	for _, tc := range []struct {
		name     string
		c        cadence
		due, now string
		missed   Missed
		period   string // "" for none sent
		next     string
	}{
		{"on time", hourly, "2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z", RunOnce, "2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z"},
		{"late within the period", hourly, "2026-01-01T10:00:00Z", "2026-01-01T10:59:59Z", RunOnce, "2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z"},
		{"late within the period, skip", hourly, "2026-01-01T10:00:00Z", "2026-01-01T10:59:59Z", SkipMissed, "2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z"},
		{"missed: the latest is sent", hourly, "2026-01-01T10:00:00Z", "2026-01-01T15:30:00Z", RunOnce, "2026-01-01T15:00:00Z", "2026-01-01T16:00:00Z"},
		{"missed: skipped", hourly, "2026-01-01T10:00:00Z", "2026-01-01T15:30:00Z", SkipMissed, "", "2026-01-01T16:00:00Z"},
		{"missed by one period", hourly, "2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z", RunOnce, "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z"},
		{"cron on time", cronHourly, "2026-01-01T10:00:00Z", "2026-01-01T10:00:01Z", RunOnce, "2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z"},
		{"cron missed", cronHourly, "2026-01-01T10:00:00Z", "2026-01-03T07:10:00Z", RunOnce, "2026-01-03T07:00:00Z", "2026-01-03T08:00:00Z"},
		{"cron missed, skip", cronHourly, "2026-01-01T10:00:00Z", "2026-01-03T07:10:00Z", SkipMissed, "", "2026-01-03T08:00:00Z"},
		{"cron missed for a year", minutely, "2025-01-01T00:00:00Z", "2026-01-01T12:34:56Z", RunOnce, "2026-01-01T12:34:00Z", "2026-01-01T12:35:00Z"},
	} {
		period, send, next := plan(tc.c, utc(tc.due), utc(tc.now), tc.missed)
		if send != (tc.period != "") || send && !period.Equal(utc(tc.period)) || !next.Equal(utc(tc.next)) {
			t.Errorf("%s: send %v period %v, next %v; want period %q, next %s", tc.name, send, period, next, tc.period, tc.next)
		}
	}
}
