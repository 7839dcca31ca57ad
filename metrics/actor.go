package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/metrics/internal/series"
)

// actorMetrics are the gauges and counters read from an actor's Stats.
var actorMetrics = []series.Series[actor.Stats]{
	series.Counter("actorpool_actor_tasks_submitted_total", "Tasks offered by every send, accepted or not.",
		func(s actor.Stats) uint64 { return s.Submitted }),
	series.Counter("actorpool_actor_tasks_rejected_total", "Tasks a send refused with an error (mailbox full, closed, sender's context ended).",
		func(s actor.Stats) uint64 { return s.Rejected }),
	series.Counter("actorpool_actor_tasks_dropped_total", "Tasks dropped by the overflow policy; also counted as dead-lettered.",
		func(s actor.Stats) uint64 { return s.Dropped }),
	series.Counter("actorpool_actor_tasks_completed_total", "Tasks whose handler succeeded.",
		func(s actor.Stats) uint64 { return s.Completed }),
	series.Counter("actorpool_actor_tasks_dead_lettered_total", "Accepted tasks handed to the dead letters.",
		func(s actor.Stats) uint64 { return s.DeadLettered }),
	series.Counter("actorpool_actor_attempts_failed_total", "Handler attempts that failed: errors, timeouts, panics.",
		func(s actor.Stats) uint64 { return s.Failed }),
	series.Counter("actorpool_actor_panics_total", "Handler attempts that panicked or called runtime.Goexit; also counted as failed.",
		func(s actor.Stats) uint64 { return s.Panicked }),
	series.Counter("actorpool_actor_retries_total", "Retries scheduled.",
		func(s actor.Stats) uint64 { return s.Retried }),

	series.Gauge("actorpool_actor_queued_tasks", "Tasks waiting for a worker.",
		func(s actor.Stats) int { return s.Queued }),
	series.Gauge("actorpool_actor_retrying_tasks", "Tasks waiting for their retry's backoff.",
		func(s actor.Stats) int { return s.Retrying }),
	series.Gauge("actorpool_actor_running_tasks", "Tasks in a handler.",
		func(s actor.Stats) int { return s.Running }),
	series.Gauge("actorpool_actor_blocked_sends", "Sends waiting for room in a full mailbox.",
		func(s actor.Stats) int { return s.Blocked }),
	series.Gauge("actorpool_actor_workers", "Worker goroutines.",
		func(s actor.Stats) int { return s.Workers }),
	series.Gauge("actorpool_actor_busy_workers", "Workers in a handler.",
		func(s actor.Stats) int { return s.Busy }),
	series.Gauge("actorpool_actor_idle_workers", "Workers waiting for a task.",
		func(s actor.Stats) int { return s.Idle }),
	series.GaugeSeconds("actorpool_actor_oldest_queued_seconds", "How long the task that has waited longest for a worker has waited.",
		func(s actor.Stats) time.Duration { return s.OldestQueued }),
}

// An ActorObserver feeds one actor's histograms.
type ActorObserver struct {
	queueWait      prometheus.Observer
	runOK, runFail prometheus.Observer
}

// ActorObserver returns the observer that feeds the histograms of the actor
// name. Every call with the same name feeds the same series.
func (c *Collector) ActorObserver(name string) *ActorObserver {
	return &ActorObserver{
		queueWait: c.actorQueueWait.WithLabelValues(name),
		runOK:     c.actorRun.WithLabelValues(name, "ok"),
		runFail:   c.actorRun.WithLabelValues(name, "error"),
	}
}

// ObserveQueueWait records a task that waited d for a worker.
func (o *ActorObserver) ObserveQueueWait(d time.Duration) { o.queueWait.Observe(d.Seconds()) }

// ObserveRun records a handler attempt that took d and returned err.
func (o *ActorObserver) ObserveRun(d time.Duration, err error) {
	pick(o.runOK, o.runFail, err).Observe(d.Seconds())
}

// InstrumentHandler returns a handler that runs h and records, in o, how long
// each task waited since it was enqueued and how long h took. An attempt that
// panics or calls runtime.Goexit is recorded as an error; the panic goes on,
// for the actor to recover.
func InstrumentHandler[T any](o *ActorObserver, h actor.Handler[T]) actor.Handler[T] {
	return func(ctx context.Context, task actor.Task[T]) error {
		start := time.Now()
		o.ObserveQueueWait(start.Sub(task.Enqueued))
		returned := false
		defer func() {
			if !returned {
				o.ObserveRun(time.Since(start), errAborted)
			}
		}()
		err := h(ctx, task)
		returned = true
		o.ObserveRun(time.Since(start), err)
		return err
	}
}

// errAborted stands for the error of an attempt that panicked or exited.
var errAborted = errors.New("handler panicked or exited")
