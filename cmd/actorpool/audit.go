package main

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/config"
	"github.com/actorpool/actorpool/metrics"
	"github.com/actorpool/actorpool/metrics/jsmetrics"
	"github.com/actorpool/actorpool/metrics/pgmetrics"
)

// An auditActor is the demo's audit actor: in memory (package actor), or
// durable in PostgreSQL (package pgactor) when the demo runs against one.
type auditActor interface {
	// send hands the actor the audit record of one request.
	send(ctx context.Context, e auditEvent) error
	// stats returns the actor's counters since the run began, and its
	// gauges, in the in-memory actor's shape.
	stats() actor.Stats
	// close stops the actor once the run is over, waiting for it until
	// ctx ends. An interrupted run stops at once; one that ran its course
	// lets the actor finish its queue first.
	close(ctx context.Context, interrupted bool) error
}

// A durableActor is an audit actor whose queue outlives the run.
type durableActor interface {
	auditActor
	// store names where the queue is kept, such as "PostgreSQL".
	store() string
	// header says where the queue is and what the run found in it.
	header() string
	// footer says what the run leaves in the queue for the next one.
	footer() string
}

// memoryAudit is the audit actor in memory: its tasks end with the process,
// so that close drains them, interrupted or not.
type memoryAudit struct{ a *actor.Actor[auditEvent] }

func (m memoryAudit) send(ctx context.Context, e auditEvent) error { return m.a.Send(ctx, e) }
func (m memoryAudit) stats() actor.Stats                           { return m.a.Stats() }
func (m memoryAudit) close(ctx context.Context, _ bool) error      { return m.a.Close(ctx) }

// startAudit starts the audit actor — durable against PostgreSQL, on pg's
// pools; durable on JetStream with --jetstream; in memory otherwise — and
// has the collectors export it: m the in-memory actor, the returned
// collector a durable one.
func startAudit(ctx context.Context, f demoFlags, cfg config.Actor, pg *postgresBackend, handle actor.Handler[auditEvent],
	logger *slog.Logger, m *metrics.Collector) (auditActor, prometheus.Collector, error) {
	if pg != nil {
		d, a, err := newDurableAudit(ctx, pg.audits, pg.requests, f.schema, cfg, handle, logger)
		if err != nil {
			return nil, nil, err
		}
		c := pgmetrics.NewCollector(pgmetrics.Options{})
		c.AddActor(a)
		return d, c, nil
	}
	if f.jetstream.on {
		d, a, err := newJetStreamAudit(ctx, f.jetstream.url, f.jsDir, cfg, handle, logger)
		if err != nil {
			return nil, nil, err
		}
		c := jsmetrics.NewCollector(jsmetrics.Options{})
		if err := c.AddActor(a); err != nil {
			d.close(ctx, true)
			return nil, nil, err
		}
		return d, c, nil
	}
	acfg := config.ActorConfig[auditEvent](cfg)
	acfg.Logger = logger
	acfg.OnError = func(*actor.TaskError) {} // counted in Stats, summed up at the end
	acfg.DeadLetters = actor.NewRingSink[auditEvent](100)
	a, err := actor.New(cfg.Name, handle, acfg)
	if err != nil {
		return nil, nil, err
	}
	m.AddActor(cfg.Name, a.Stats)
	return memoryAudit{a}, nil, nil
}
