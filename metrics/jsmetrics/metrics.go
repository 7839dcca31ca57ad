package jsmetrics

import (
	"time"

	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/metrics/internal/durable"
	"github.com/actorpool/actorpool/metrics/internal/series"
)

// metricsOf are the series of a durable actor on JetStream. Each name and
// help is package pgmetrics' own, word for word, so that one dashboard
// shows actors of both backends, and so that both collectors register in
// one registry, which refuses a family whose help differs between them.
var metricsOf = []durable.Metric[jsactor.Stats]{
	{Series: series.Counter("actorpool_actor_tasks_accepted_total", "Tasks a durable actor stored: sent, or replayed from its dead letters.",
		func(s jsactor.Stats) uint64 { return s.Accepted })},
	{Series: series.Counter("actorpool_actor_tasks_completed_total", "Tasks whose handler succeeded.",
		func(s jsactor.Stats) uint64 { return s.Completed })},
	{Series: series.Counter("actorpool_actor_tasks_dead_lettered_total", "Accepted tasks handed to the dead letters.",
		func(s jsactor.Stats) uint64 { return s.DeadLettered })},
	{Series: series.Counter("actorpool_actor_tasks_replayed_total", "Dead letters of a durable actor replayed; also counted as accepted.",
		func(s jsactor.Stats) uint64 { return s.Replayed })},
	{Series: series.Counter("actorpool_actor_attempts_failed_total", "Handler attempts that failed: errors, timeouts, panics.",
		func(s jsactor.Stats) uint64 { return s.Failed })},
	{Series: series.Counter("actorpool_actor_retries_total", "Retries scheduled.",
		func(s jsactor.Stats) uint64 { return s.Retried })},
	{Series: series.Counter("actorpool_actor_lost_runs_total", "Runs of a durable actor's tasks taken over after their worker's lease ran out.",
		func(s jsactor.Stats) uint64 { return s.Lost })},

	{Series: series.Gauge("actorpool_actor_queued_tasks", "Tasks waiting for a worker.",
		func(s jsactor.Stats) int { return s.Queued })},
	{Series: series.Gauge("actorpool_actor_scheduled_tasks", "Tasks of a durable actor sent to run later, not yet due.",
		func(s jsactor.Stats) int { return s.Scheduled })},
	{Series: series.Gauge("actorpool_actor_retrying_tasks", "Tasks waiting for their retry's backoff.",
		func(s jsactor.Stats) int { return s.Retrying })},
	{Series: series.Gauge("actorpool_actor_running_tasks", "Tasks in a handler.",
		func(s jsactor.Stats) int { return s.Running })},
	{Series: series.Gauge("actorpool_actor_dead_letters", "Dead letters of a durable actor stored now, until deleted or replayed.",
		func(s jsactor.Stats) int { return s.DeadLetters })},
	{Series: series.GaugeSeconds("actorpool_actor_oldest_queued_seconds", "How long the task that has waited longest for a worker has waited.",
		func(s jsactor.Stats) time.Duration { return s.OldestQueued })},
	// The help names pgactor's Admin.Pause, as pgmetrics' does: the two
	// must be equal. On JetStream the pause is Actor.Pause.
	{Series: series.Gauge("actorpool_actor_paused", "1 while a durable actor is paused (Admin.Pause): no process takes its tasks.",
		func(s jsactor.Stats) int {
			if s.Paused {
				return 1
			}
			return 0
		})},

	{Series: series.Gauge("actorpool_actor_workers", "Worker goroutines.",
		func(s jsactor.Stats) int { return s.Workers }), Local: true},
	{Series: series.Gauge("actorpool_actor_busy_workers", "Workers in a handler.",
		func(s jsactor.Stats) int { return s.Busy }), Local: true},
}
