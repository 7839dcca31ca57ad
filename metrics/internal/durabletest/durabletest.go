// Package durabletest holds what the tests of packages metrics/pgmetrics
// and metrics/jsmetrics share: the exposition that both collectors must
// produce, family for family, which differs only in the label that holds
// an actor's place (its schema, its prefix), and the checks on it.
package durabletest

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// distinct is the exposition of the actor "audit" added with AddActor,
// whose Stats hold a different value in every field, so that a field
// mapped to the wrong series shows:
//
//	Accepted: 100, Completed: 60, DeadLettered: 7, Failed: 9, Retried: 8, Lost: 3, Replayed: 2,
//	Queued: 11, Scheduled: 12, Running: 13, Retrying: 14, DeadLetters: 5, OldestQueued: 1500 * time.Millisecond,
//	Workers: 16, Busy: 13, Idle: 3, Paused: true,
const distinct = `
# HELP actorpool_actor_attempts_failed_total Handler attempts that failed: errors, timeouts, panics.
# TYPE actorpool_actor_attempts_failed_total counter
actorpool_actor_attempts_failed_total{actor="audit",{place}} 9
# HELP actorpool_actor_busy_workers Workers in a handler.
# TYPE actorpool_actor_busy_workers gauge
actorpool_actor_busy_workers{actor="audit",{place}} 13
# HELP actorpool_actor_dead_letters Dead letters of a durable actor stored now, until deleted or replayed.
# TYPE actorpool_actor_dead_letters gauge
actorpool_actor_dead_letters{actor="audit",{place}} 5
# HELP actorpool_actor_lost_runs_total Runs of a durable actor's tasks taken over after their worker's lease ran out.
# TYPE actorpool_actor_lost_runs_total counter
actorpool_actor_lost_runs_total{actor="audit",{place}} 3
# HELP actorpool_actor_oldest_queued_seconds How long the task that has waited longest for a worker has waited.
# TYPE actorpool_actor_oldest_queued_seconds gauge
actorpool_actor_oldest_queued_seconds{actor="audit",{place}} 1.5
# HELP actorpool_actor_paused 1 while a durable actor is paused (Admin.Pause): no process takes its tasks.
# TYPE actorpool_actor_paused gauge
actorpool_actor_paused{actor="audit",{place}} 1
# HELP actorpool_actor_queued_tasks Tasks waiting for a worker.
# TYPE actorpool_actor_queued_tasks gauge
actorpool_actor_queued_tasks{actor="audit",{place}} 11
# HELP actorpool_actor_retries_total Retries scheduled.
# TYPE actorpool_actor_retries_total counter
actorpool_actor_retries_total{actor="audit",{place}} 8
# HELP actorpool_actor_retrying_tasks Tasks waiting for their retry's backoff.
# TYPE actorpool_actor_retrying_tasks gauge
actorpool_actor_retrying_tasks{actor="audit",{place}} 14
# HELP actorpool_actor_running_tasks Tasks in a handler.
# TYPE actorpool_actor_running_tasks gauge
actorpool_actor_running_tasks{actor="audit",{place}} 13
# HELP actorpool_actor_scheduled_tasks Tasks of a durable actor sent to run later, not yet due.
# TYPE actorpool_actor_scheduled_tasks gauge
actorpool_actor_scheduled_tasks{actor="audit",{place}} 12
# HELP actorpool_actor_tasks_accepted_total Tasks a durable actor stored: sent, or replayed from its dead letters.
# TYPE actorpool_actor_tasks_accepted_total counter
actorpool_actor_tasks_accepted_total{actor="audit",{place}} 100
# HELP actorpool_actor_tasks_completed_total Tasks whose handler succeeded.
# TYPE actorpool_actor_tasks_completed_total counter
actorpool_actor_tasks_completed_total{actor="audit",{place}} 60
# HELP actorpool_actor_tasks_dead_lettered_total Accepted tasks handed to the dead letters.
# TYPE actorpool_actor_tasks_dead_lettered_total counter
actorpool_actor_tasks_dead_lettered_total{actor="audit",{place}} 7
# HELP actorpool_actor_tasks_replayed_total Dead letters of a durable actor replayed; also counted as accepted.
# TYPE actorpool_actor_tasks_replayed_total counter
actorpool_actor_tasks_replayed_total{actor="audit",{place}} 2
# HELP actorpool_actor_workers Worker goroutines.
# TYPE actorpool_actor_workers gauge
actorpool_actor_workers{actor="audit",{place}} 16
`

// scenario is the exposition of two actors after the scenario that both
// packages' tests run on a real server: audit, added with AddActor, was
// sent 3 ok, permanent, retry, a replay, block and 2 later, all accepted,
// and its permanent task failed twice and the retry once; mail, added
// with Add, is paused with 2 tasks queued. It leaves out the oldest
// queued, a time that CheckScenario checks apart, and the lost runs, which
// need a worker killed.
const scenario = `
# HELP actorpool_actor_attempts_failed_total Handler attempts that failed: errors, timeouts, panics.
# TYPE actorpool_actor_attempts_failed_total counter
actorpool_actor_attempts_failed_total{actor="audit",{place}} 3
actorpool_actor_attempts_failed_total{actor="mail",{place}} 0
# HELP actorpool_actor_busy_workers Workers in a handler.
# TYPE actorpool_actor_busy_workers gauge
actorpool_actor_busy_workers{actor="audit",{place}} 1
# HELP actorpool_actor_dead_letters Dead letters of a durable actor stored now, until deleted or replayed.
# TYPE actorpool_actor_dead_letters gauge
actorpool_actor_dead_letters{actor="audit",{place}} 0
actorpool_actor_dead_letters{actor="mail",{place}} 0
# HELP actorpool_actor_paused 1 while a durable actor is paused (Admin.Pause): no process takes its tasks.
# TYPE actorpool_actor_paused gauge
actorpool_actor_paused{actor="audit",{place}} 0
actorpool_actor_paused{actor="mail",{place}} 1
# HELP actorpool_actor_queued_tasks Tasks waiting for a worker.
# TYPE actorpool_actor_queued_tasks gauge
actorpool_actor_queued_tasks{actor="audit",{place}} 0
actorpool_actor_queued_tasks{actor="mail",{place}} 2
# HELP actorpool_actor_retries_total Retries scheduled.
# TYPE actorpool_actor_retries_total counter
actorpool_actor_retries_total{actor="audit",{place}} 1
actorpool_actor_retries_total{actor="mail",{place}} 0
# HELP actorpool_actor_retrying_tasks Tasks waiting for their retry's backoff.
# TYPE actorpool_actor_retrying_tasks gauge
actorpool_actor_retrying_tasks{actor="audit",{place}} 1
actorpool_actor_retrying_tasks{actor="mail",{place}} 0
# HELP actorpool_actor_running_tasks Tasks in a handler.
# TYPE actorpool_actor_running_tasks gauge
actorpool_actor_running_tasks{actor="audit",{place}} 1
actorpool_actor_running_tasks{actor="mail",{place}} 0
# HELP actorpool_actor_scheduled_tasks Tasks of a durable actor sent to run later, not yet due.
# TYPE actorpool_actor_scheduled_tasks gauge
actorpool_actor_scheduled_tasks{actor="audit",{place}} 2
actorpool_actor_scheduled_tasks{actor="mail",{place}} 0
# HELP actorpool_actor_tasks_accepted_total Tasks a durable actor stored: sent, or replayed from its dead letters.
# TYPE actorpool_actor_tasks_accepted_total counter
actorpool_actor_tasks_accepted_total{actor="audit",{place}} 9
actorpool_actor_tasks_accepted_total{actor="mail",{place}} 2
# HELP actorpool_actor_tasks_completed_total Tasks whose handler succeeded.
# TYPE actorpool_actor_tasks_completed_total counter
actorpool_actor_tasks_completed_total{actor="audit",{place}} 3
actorpool_actor_tasks_completed_total{actor="mail",{place}} 0
# HELP actorpool_actor_tasks_dead_lettered_total Accepted tasks handed to the dead letters.
# TYPE actorpool_actor_tasks_dead_lettered_total counter
actorpool_actor_tasks_dead_lettered_total{actor="audit",{place}} 2
actorpool_actor_tasks_dead_lettered_total{actor="mail",{place}} 0
# HELP actorpool_actor_tasks_replayed_total Dead letters of a durable actor replayed; also counted as accepted.
# TYPE actorpool_actor_tasks_replayed_total counter
actorpool_actor_tasks_replayed_total{actor="audit",{place}} 1
actorpool_actor_tasks_replayed_total{actor="mail",{place}} 0
# HELP actorpool_actor_workers Worker goroutines.
# TYPE actorpool_actor_workers gauge
actorpool_actor_workers{actor="audit",{place}} 2
`

// Distinct returns the exposition of an actor whose Stats hold a different
// value in every field, labelled label="value" (such as schema="jobs").
func Distinct(label, value string) string { return placed(distinct, label, value) }

// placed gives the exposition text its place label.
func placed(text, label, value string) string {
	return strings.ReplaceAll(text, "{place}", label+"="+strconv.Quote(value))
}

// CheckMapping checks that c reports exactly the series of want, as
// Distinct returns it, and that they pass the linter.
func CheckMapping(t testing.TB, c prometheus.Collector, want string) {
	t.Helper()
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if n, want := testutil.CollectAndCount(c), strings.Count(want, `"} `); n != want {
		t.Errorf("the collector reports %d series, the test expects %d", n, want)
	}
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Error(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

var family = regexp.MustCompile(`(?m)^# TYPE (\S+) `)

// CheckScenario checks that c, registered in reg, reports the series of
// the scenario with the place label="value", and the oldest queued gauge
// above 0 for mail only, whose tasks wait.
func CheckScenario(t testing.TB, reg prometheus.Gatherer, c prometheus.Collector, label, value string) {
	t.Helper()
	want := placed(scenario, label, value)
	var names []string
	for _, m := range family.FindAllStringSubmatch(want, -1) {
		names = append(names, m[1])
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Error(err)
		return
	}
	seen := 0
	for _, f := range families {
		if f.GetName() != "actorpool_actor_oldest_queued_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			seen++
			if v := m.GetGauge().GetValue(); (m.GetLabel()[0].GetValue() == "mail") != (v > 0) {
				t.Errorf("oldest queued of %s: %v, want more than 0 for mail only, whose tasks wait", m.GetLabel()[0].GetValue(), v)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d series of the oldest queued, want 2: audit's and mail's", seen)
	}
}
