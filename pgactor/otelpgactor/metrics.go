package otelpgactor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/actorpool/actorpool/oteltask"
	"github.com/actorpool/actorpool/pgactor"
)

// A Source is what RegisterMetrics reads: a *pgactor.Actor of any payload
// type.
type Source interface {
	Name() string
	Stats(ctx context.Context) (pgactor.Stats, error)
}

// statsTimeout bounds the Stats query of one collection, so that a slow
// server holds a collection up no longer.
const statsTimeout = 5 * time.Second

// RegisterMetrics reports the depth of actor's queue, across every process
// running it, as observable gauges read from one Actor.Stats per
// collection — one query, of counts over the actor's rows:
//
//	actorpool.actor.tasks{actorpool.task.state=queued|scheduled|running|retrying}  tasks waiting or running
//	actorpool.actor.dead_letters                                                   dead letters stored
//	actorpool.actor.oldest_queued                                                  seconds the task due longest has waited
//
// each with messaging.system and messaging.destination.name (the actor).
// A failed query is returned to the SDK, which reports it, and observes
// nothing. Unregister the returned Registration before closing the
// actor; a collection after Close reads the tables still, if the pool is
// open.
func RegisterMetrics(actor Source, opts ...Option) (metric.Registration, error) {
	if actor == nil {
		return nil, errors.New("otelpgactor: RegisterMetrics needs an actor; got nil")
	}
	m := oteltask.Meter(withScope(opts)...)
	tasks, err1 := m.Int64ObservableGauge("actorpool.actor.tasks",
		metric.WithDescription("Tasks of the actor waiting or running, by state, across every process."), metric.WithUnit("{task}"))
	dead, err2 := m.Int64ObservableGauge("actorpool.actor.dead_letters",
		metric.WithDescription("Dead letters of the actor stored."), metric.WithUnit("{task}"))
	oldest, err3 := m.Float64ObservableGauge("actorpool.actor.oldest_queued",
		metric.WithDescription("How long the task of the actor due longest has waited for a worker; 0 when none waits."), metric.WithUnit("s"))
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("otelpgactor: making the instruments of actor %q: %w", actor.Name(), err)
	}
	base := []attribute.KeyValue{semconv.MessagingSystemKey.String(System), semconv.MessagingDestinationName(actor.Name())}
	state := func(s string) metric.ObserveOption {
		return metric.WithAttributeSet(attribute.NewSet(append(base[:len(base):len(base)], StateKey.String(s))...))
	}
	queued, scheduled, running, retrying := state("queued"), state("scheduled"), state("running"), state("retrying")
	plain := metric.WithAttributeSet(attribute.NewSet(base...))
	reg, err := m.RegisterCallback(func(ctx context.Context, obs metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, statsTimeout)
		defer cancel()
		s, err := actor.Stats(ctx)
		if err != nil {
			return fmt.Errorf("otelpgactor: reading the stats of actor %q: %w", actor.Name(), err)
		}
		obs.ObserveInt64(tasks, int64(s.Queued), queued)
		obs.ObserveInt64(tasks, int64(s.Scheduled), scheduled)
		obs.ObserveInt64(tasks, int64(s.Running), running)
		obs.ObserveInt64(tasks, int64(s.Retrying), retrying)
		obs.ObserveInt64(dead, int64(s.DeadLetters), plain)
		obs.ObserveFloat64(oldest, s.OldestQueued.Seconds(), plain)
		return nil
	}, tasks, dead, oldest)
	if err != nil {
		return nil, fmt.Errorf("otelpgactor: registering the metrics callback of actor %q: %w", actor.Name(), err)
	}
	return reg, nil
}
