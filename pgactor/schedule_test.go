package pgactor

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	cron "github.com/netresearch/go-cron"
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

// TestCronFallBack checks that a schedule whose hour is fixed fires once
// on the day its zone's clocks go back, at the first of the wall-clock
// times that come round twice, while one whose hour is a wildcard fires
// through the repeated hour; and that where the clocks go forward a
// fire time that does not exist fires once, at the next that does.
func TestCronFallBack(t *testing.T) {
	for _, tc := range []struct {
		spec, after string
		want        []string
	}{
		{"CRON_TZ=America/New_York 30 1 * * *", "2026-11-01T03:00:00Z", // 23:00 EDT the day before
			[]string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}}, // 01:30 EDT, then 01:30 EST the day after
		{"CRON_TZ=America/New_York */30 1 * * *", "2026-11-01T03:00:00Z",
			[]string{"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:00:00Z"}},
		{"CRON_TZ=America/New_York 0 * * * *", "2026-11-01T03:30:00Z", // a wildcard hour: every hour of real time
			[]string{"2026-11-01T04:00:00Z", "2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"}},
		{"CRON_TZ=Europe/London 30 1 * * *", "2026-10-24T23:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}}, // 01:30 BST, then 01:30 GMT the day after
		{"CRON_TZ=America/New_York 30 2 * * *", "2026-03-08T04:00:00Z", // spring forward: 02:30 does not exist
			[]string{"2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z"}}, // 03:30 EDT, then 02:30 EDT
		{"30 1 * * *", "2026-11-01T00:00:00Z", // UTC has no daylight saving time
			[]string{"2026-11-01T01:30:00Z", "2026-11-02T01:30:00Z"}},
	} {
		c, err := parseSpec(tc.spec)
		if err != nil {
			t.Fatalf("parseSpec(%q): %v", tc.spec, err)
		}
		at := utc(tc.after)
		for i, want := range tc.want {
			at = c.next(at)
			if !at.Equal(utc(want)) {
				t.Errorf("%q: fire time %d after %s is %v, want %s", tc.spec, i+1, tc.after, at, want)
				break
			}
		}
	}

	// A scheduler that was down across the repeated hour sends one task
	// for the day, not one for the repeat.
	daily, _ := parseSpec("CRON_TZ=America/New_York 30 1 * * *")
	period, send, next := plan(daily, utc("2026-11-01T05:30:00Z"), utc("2026-11-01T06:45:00Z"), RunOnce)
	if !send || !period.Equal(utc("2026-11-01T05:30:00Z")) || !next.Equal(utc("2026-11-02T06:30:00Z")) {
		t.Errorf("plan across the fall-back: send %v period %v next %v; want period 2026-11-01T05:30:00Z, next 2026-11-02T06:30:00Z", send, period, next)
	}
}

// TestCronStarBit checks the wildcard bit that cronCadence.skips reads
// from the parser's schedule: set in a wildcard field, clear in a fixed
// one.
func TestCronStarBit(t *testing.T) {
	for spec, star := range map[string]bool{"0 * * * *": true, "0 1 * * *": false, "0 */2 * * *": false, "@daily": false} {
		c, err := parseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := c.(cronCadence).s.(*cron.SpecSchedule)
		if !ok {
			t.Fatalf("%q: the parser's schedule is a %T, want *cron.SpecSchedule", spec, c.(cronCadence).s)
		}
		if got := s.Hour&cronStar != 0; got != star {
			t.Errorf("%q: the hour's wildcard bit is %v, want %v", spec, got, star)
		}
	}
}

// periodCounts returns, for each period of schedule name of actor, how
// many tasks were sent for it, from the tasks' headers.
func (r *rig) periodCounts(actor, name string) map[time.Time]int {
	r.t.Helper()
	rows, err := r.pool.Query(context.Background(), expand(r.schema, `SELECT headers->>'pgactor-period', count(*) FROM {s}.tasks
		WHERE actor = $1 AND headers->>'pgactor-schedule' = $2 GROUP BY 1`), actor, name)
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[time.Time]int{}
	for rows.Next() {
		var p string
		var n int
		if err := rows.Scan(&p, &n); err != nil {
			r.t.Fatal(err)
		}
		at, err := time.Parse(time.RFC3339Nano, p)
		if err != nil {
			r.t.Fatal(err)
		}
		out[at] = n
	}
	if err := rows.Err(); err != nil {
		r.t.Fatal(err)
	}
	return out
}

// TestScheduleFires checks that a schedule sends its task, with its
// payload, type and priority, and the headers naming its period, and
// that Schedules and ListSchedules describe it.
func TestScheduleFires(t *testing.T) {
	r := newRig(t)
	got := make(chan string, 10)
	a := start(r, "ticks", forward(got), Config[string]{PollInterval: 50 * time.Millisecond})
	if err := a.Schedule(t.Context(), "tick", "@every 1s", "tock", ScheduleType("tick"), SchedulePriority(3)); err != nil {
		t.Fatal(err)
	}
	if p := within(t, got, 10*time.Second, "no scheduled task ran"); p != "tock" {
		t.Errorf("payload %q, want tock", p)
	}
	infos, err := a.Schedules(t.Context())
	if err != nil || len(infos) != 1 {
		t.Fatalf("Schedules: %v, %v", infos, err)
	}
	in := infos[0]
	if in.Actor != "ticks" || in.Name != "tick" || in.Spec != "@every 1s" || in.Type != "tick" || in.Priority != 3 ||
		in.OnMissed != RunOnce || string(in.Payload) != `"tock"` || in.LastTaskID == 0 || in.LastPeriod.IsZero() ||
		!in.NextAt.After(in.LastPeriod) || in.LastPeriod.Nanosecond() != 0 {
		t.Errorf("Schedules: %+v", in)
	}
	listed, err := ListSchedules(t.Context(), r.pool, r.schema, "ticks")
	if err != nil || len(listed) != 1 || listed[0].Name != "tick" {
		t.Errorf("ListSchedules: %v, %v", listed, err)
	}
	if err := a.Unschedule(t.Context(), "tick"); err != nil {
		t.Fatal(err)
	}
	if err := a.Unschedule(t.Context(), "tick"); !errors.Is(err, ErrNoSchedule) || !strings.Contains(err.Error(), `"tick"`) {
		t.Errorf("second Unschedule: %v; want ErrNoSchedule naming the schedule", err)
	}
	if listed, err := ListSchedules(t.Context(), r.pool, r.schema, "ticks"); err != nil || len(listed) != 0 {
		t.Errorf("ListSchedules after Unschedule: %v, %v", listed, err)
	}
}

// TestScheduleBadInput checks that a refused schedule changes nothing, and
// that each refusal says what was wrong.
func TestScheduleBadInput(t *testing.T) {
	r := newRig(t)
	a := start(r, "bad", nil, Config[int]{})
	gone := start(r, "gone", nil, Config[int]{})
	r.exec(`DELETE FROM {s}.actors WHERE name = 'gone'`)
	nan := start(r, "nan", nil, Config[float64]{})
	for _, tc := range []struct {
		name string
		err  func() error
		want string
		is   error
	}{
		{"malformed cron", func() error { return a.Schedule(t.Context(), "s", "61 * * * *", 1) }, `schedule spec "61 * * * *"`, nil},
		{"every too short", func() error { return a.Schedule(t.Context(), "s", "@every 10ms", 1) }, "at least 1s", nil},
		{"never fires", func() error { return a.Schedule(t.Context(), "s", "0 0 30 2 *", 1) }, "no fire time", nil},
		{"empty name", func() error { return a.Schedule(t.Context(), "", "@hourly", 1) }, "the name must be", nil},
		{"bad policy", func() error { return a.Schedule(t.Context(), "s", "@hourly", 1, OnMissed(7)) }, "neither RunOnce nor SkipMissed", nil},
		{"empty type", func() error { return a.Schedule(t.Context(), "s", "@hourly", 1, ScheduleType("")) }, "ScheduleType: the name is empty", nil},
		{"payload the codec refuses", func() error { return nan.Schedule(t.Context(), "s", "@hourly", math.NaN()) }, "cannot encode payload", nil},
		{"actor gone", func() error { return gone.Schedule(t.Context(), "s", "@hourly", 1) }, `"gone"`, ErrUnknownActor},
		{"list of an unknown actor", func() error { _, err := ListSchedules(t.Context(), r.pool, r.schema, "nobody"); return err }, `"nobody"`, ErrUnknownActor},
		{"remove what is not there", func() error { return RemoveSchedule(t.Context(), r.pool, r.schema, "bad", "s") }, `"s"`, ErrNoSchedule},
		{"bad schema", func() error { _, err := ListSchedules(t.Context(), r.pool, "Bad-Schema", "bad"); return err }, "schema name", nil},
	} {
		err := tc.err()
		if err == nil || !strings.Contains(err.Error(), tc.want) || tc.is != nil && !errors.Is(err, tc.is) || !strings.HasPrefix(err.Error(), "pgactor") {
			t.Errorf("%s: %v; want an error saying %q", tc.name, err, tc.want)
		}
	}
	if n := r.count(`SELECT count(*) FROM {s}.schedules`); n != 0 {
		t.Errorf("%d schedules stored by refused requests", n)
	}
}

// TestScheduleMissed checks what a process that comes back after an outage
// sends for the periods missed, under each policy: it simulates the outage
// by moving the schedule's next fire time hours back, as a schedule that
// no process fired would be.
func TestScheduleMissed(t *testing.T) {
	for _, tc := range []struct {
		missed Missed
		want   int // tasks sent
	}{{RunOnce, 1}, {SkipMissed, 0}} {
		t.Run(tc.missed.String(), func(t *testing.T) {
			r := newRig(t)
			a := start(r, "reports", nil, Config[int]{})
			if err := a.Schedule(t.Context(), "hourly", "@every 1h", 1, OnMissed(tc.missed)); err != nil {
				t.Fatal(err)
			}
			// Closed, its scheduler runs no more: the test fires by hand.
			if err := a.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			r.exec(`UPDATE {s}.schedules SET next_at = date_bin('1 hour', now(), 'epoch') - interval '5 hours'`)
			if _, err := a.fireDue(t.Context()); err != nil {
				t.Fatal(err)
			}
			counts := r.periodCounts("reports", "hourly")
			current := r.count(`SELECT extract(epoch FROM date_bin('1 hour', now(), 'epoch'))::bigint`)
			if len(counts) != tc.want || tc.want == 1 && counts[time.Unix(int64(current), 0).UTC()] != 1 {
				t.Errorf("after 5 hours missed: tasks by period %v; want %d, for the current hour", counts, tc.want)
			}
			if n := r.count(`SELECT count(*) FROM {s}.schedules WHERE next_at = date_bin('1 hour', now(), 'epoch') + interval '1 hour'`); n != 1 {
				t.Errorf("the schedule's next fire time is not the next hour")
			}
			if tc.missed != RunOnce {
				return
			}
			// Going back again, into a period already sent, sends nothing:
			// the period's row refuses it.
			r.exec(`UPDATE {s}.schedules SET next_at = date_bin('1 hour', now(), 'epoch')`)
			if _, err := a.fireDue(t.Context()); err != nil {
				t.Fatal(err)
			}
			if again := r.periodCounts("reports", "hourly"); len(again) != 1 || again[time.Unix(int64(current), 0).UTC()] != 1 {
				t.Errorf("a period fired twice: %v", again)
			}
		})
	}
}

// TestScheduleReplace checks that Schedule with the same spec, as a
// restarting process calls it, keeps the next fire time — so the periods
// missed while it was down are still made up for — and that a new spec
// moves it.
func TestScheduleReplace(t *testing.T) {
	r := newRig(t)
	a := start(r, "jobs", nil, Config[int]{})
	if err := a.Schedule(t.Context(), "j", "@every 1h", 1); err != nil {
		t.Fatal(err)
	}
	// Closed, its scheduler fires nothing while the test looks.
	if err := a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.exec(`UPDATE {s}.schedules SET next_at = '2001-01-01T00:00:00Z'`)
	if err := a.Schedule(t.Context(), "j", "@every 1h", 2, SchedulePriority(5)); err != nil {
		t.Fatal(err)
	}
	if n := r.count(`SELECT count(*) FROM {s}.schedules WHERE next_at = '2001-01-01T00:00:00Z' AND payload = '2' AND priority = 5`); n != 1 {
		t.Errorf("the same spec moved the next fire time, or did not replace the payload and priority")
	}
	if err := a.Schedule(t.Context(), "j", "@daily", 2); err != nil {
		t.Fatal(err)
	}
	if n := r.count(`SELECT count(*) FROM {s}.schedules WHERE next_at = date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 day'`); n != 1 {
		t.Errorf("a new spec did not move the next fire time to its first after now")
	}
}

// TestScheduleNoDoubles runs three instances of an actor, each on a pool
// of its own as processes would, with one schedule firing every second,
// and checks that every period from the first to the last was sent
// exactly once.
func TestScheduleNoDoubles(t *testing.T) {
	r := newRig(t)
	var actors []*Actor[int]
	for range 3 {
		p := newPool(t, r.dsn, 4)
		a, err := New(context.Background(), p, "every", nil, Config[int]{Schema: r.schema, PollInterval: 20 * time.Millisecond, Logger: quiet(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close(context.Background()) })
		actors = append(actors, a)
	}
	for _, a := range actors {
		if err := a.Schedule(t.Context(), "second", "@every 1s", 0); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "5 periods sent", func() bool { return len(r.periodCounts("every", "second")) >= 5 })
	for _, a := range actors {
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	counts := r.periodCounts("every", "second")
	checkOnePerPeriod(t, counts, time.Second)
	if s := stats(t, actors[0]); s.Accepted != uint64(len(counts)) {
		t.Errorf("accepted %d, want %d: each scheduled task counts once", s.Accepted, len(counts))
	}
}

// checkOnePerPeriod fails t unless counts has one task for each period
// from its first to its last, each step apart.
func checkOnePerPeriod(t *testing.T, counts map[time.Time]int, step time.Duration) {
	t.Helper()
	var first, last time.Time
	for p := range counts {
		if first.IsZero() || p.Before(first) {
			first = p
		}
		if p.After(last) {
			last = p
		}
	}
	for p := first; !p.After(last); p = p.Add(step) {
		if counts[p] != 1 {
			t.Errorf("period %v: %d tasks, want 1 (all: %v)", p.Format(time.RFC3339), counts[p], counts)
		}
	}
	if n := int(last.Sub(first)/step) + 1; len(counts) != n {
		t.Errorf("%d periods have tasks, %d between the first and the last: some fell between the steps: %v", len(counts), n, counts)
	}
}

// TestSchedulerWait checks how long the scheduler sleeps after a round:
// until the next schedule is due, never longer than the poll interval,
// and not zero when a due schedule is held by another process.
func TestSchedulerWait(t *testing.T) {
	poll := time.Second
	for _, tc := range []struct {
		name string
		d    time.Duration
		err  error
		want time.Duration
	}{
		{"next due soon", 200 * time.Millisecond, nil, 200 * time.Millisecond},
		{"next due later than the poll", time.Hour, nil, poll},
		{"no schedule", -1, nil, poll},
		{"round failed", 0, errors.New("down"), poll},
		{"due, held by another", 0, nil, heldRetry},
	} {
		if got := schedulerWait(tc.d, tc.err, poll); got != tc.want {
			t.Errorf("%s: waits %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := schedulerWait(0, nil, 10*time.Millisecond); got != 10*time.Millisecond {
		t.Errorf("held, with a poll shorter than heldRetry: waits %v, want the poll", got)
	}
}
