// Package pgmetrics exports the durable actors of package pgactor to
// Prometheus, in the metric families that package metrics uses for the
// in-memory actor wherever the meaning is the same, so that one dashboard
// shows both:
//
//	m := metrics.NewCollector(metrics.Options{}) // pools, in-memory actors, histograms
//	d := pgmetrics.NewCollector(pgmetrics.Options{})
//	prometheus.MustRegister(m, d)
//
//	audit, err := pgactor.New(ctx, pool, "audit", metrics.InstrumentHandler(m.ActorObserver("audit"), handle), cfg)
//	...
//	d.AddActor(audit)                       // a durable actor this process runs
//	d.Add(pool, pgactor.DefaultSchema, "mail") // one it only watches
//
// It is a package of its own because a durable actor's Stats are read from
// PostgreSQL through pgactor and pgx: a program that exports only pools and
// in-memory actors, with package metrics, does not compile them.
//
// # What is read, and when
//
// Each scrape reads each actor's Stats with one query ([pgactor.ReadStats],
// or the Stats of an actor added with AddActor, which adds this process's
// workers), so that every snapshot holds
//
//	accepted = completed + dead_lettered + queued + scheduled + running + retrying
//
// The reads of one scrape share a deadline, Options.Timeout. A read that
// fails — the server down, the schema dropped — is reported through the
// registry's error path for that actor (promhttp answers 500, or leaves the
// actor out with promhttp.ContinueOnError); the other actors are still
// reported.
//
// # The series
//
// Every series is labelled actor and schema. The families shared with the
// in-memory actor, with the same names and help:
//
//	actorpool_actor_tasks_completed_total      tasks whose completion committed
//	actorpool_actor_tasks_dead_lettered_total  tasks moved to the dead letters
//	actorpool_actor_attempts_failed_total      failed handler attempts
//	actorpool_actor_retries_total              retries scheduled
//	actorpool_actor_queued_tasks               due, waiting for a worker
//	actorpool_actor_retrying_tasks             waiting for their backoff
//	actorpool_actor_running_tasks              held by a worker (or by a dead one, until its lease passes)
//	actorpool_actor_oldest_queued_seconds      the longest wait of a due task
//	actorpool_actor_workers                    this process's workers (AddActor only)
//	actorpool_actor_busy_workers               of which in a handler (AddActor only)
//
// and those of a durable actor only:
//
//	actorpool_actor_tasks_accepted_total  tasks stored by sends and by replays
//	actorpool_actor_tasks_replayed_total  dead letters replayed (counted as accepted too)
//	actorpool_actor_lost_runs_total       runs taken over after their worker's lease ran out
//	actorpool_actor_scheduled_tasks       sent to run later, not yet due
//	actorpool_actor_dead_letters          dead letters stored now
//	actorpool_actor_paused                1 while the actor is paused (Admin.Pause), else 0
//
// The in-memory actor's submitted, rejected, dropped and panics counters and
// its blocked sends have no durable counterpart: a send that fails stores
// nothing, and a durable queue has no bound that blocks senders. The
// histograms of queue wait and run time come from [metrics.InstrumentHandler]
// around the durable actor's handler, as for an in-memory one, and are this
// process's, labelled by actor only.
//
// The counters and the task gauges are the actor's across every process
// that runs it: each replica that exports them reports the same values, so
// aggregate them with max by (actor, schema), not sum — or export them from
// one process only. The worker gauges are each process's own, to be summed.
//
// The collector describes no metrics to the registry: it is "unchecked".
// Its families share names with those of metrics.Collector but carry a
// schema label that those lack, and a registry refuses to register two
// collectors that describe one name with different labels. Unchecked, it
// registers beside metrics.Collector, and the names, types and help of what
// it collects are still checked at each scrape.
package pgmetrics
