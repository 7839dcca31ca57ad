// Package jsmetrics exports the durable actors of package jsactor, which
// keep their tasks in NATS JetStream, to Prometheus, in the metric
// families of package metrics/pgmetrics, name for name and help for help,
// so that one dashboard shows the durable actors of both backends:
//
//	m := metrics.NewCollector(metrics.Options{}) // pools, in-memory actors, histograms
//	d := jsmetrics.NewCollector(jsmetrics.Options{})
//	prometheus.MustRegister(m, d)
//
//	audit, err := jsactor.New(ctx, nc, "audit", metrics.InstrumentHandler(m.ActorObserver("audit"), handle), cfg)
//	...
//	d.AddActor(audit)                             // a durable actor this process runs
//	d.Add(nc, jsactor.DefaultPrefix, "mail")      // one it only watches
//
// It is a package of its own because a JetStream actor's Stats are read
// through the NATS client: a program that exports only pools and
// in-memory actors, with package metrics, does not compile it.
//
// # What is read, and when
//
// Each scrape reads each actor's Stats ([jsactor.ReadStats], or the Stats
// of an actor added with AddActor, which adds this process's workers): a
// few requests to the server per actor, for its streams' and consumers'
// state and its counters. The reads of one scrape share a deadline,
// Options.Timeout. A read that fails — the server down, the streams
// deleted — is reported through the registry's error path for that actor
// (promhttp answers 500, or leaves the actor out with
// promhttp.ContinueOnError); the other actors are still reported.
//
// Unlike pgmetrics' snapshot, which one query reads, this one is not
// consistent: the gauges are read one after another, and each process adds
// its counters to the server every jsactor.Config.FlushInterval, so
//
//	accepted = completed + dead_lettered + queued + scheduled + running + retrying
//
// holds only while the actor is still, and the counters lag the gauges by
// up to one interval (see the Stats section of package jsactor).
//
// # The series
//
// Every series is labelled actor and prefix, the jsactor.Config.Prefix
// that names the actor's streams, where pgmetrics' have actor and schema:
// a query that groups by actor, or by (actor, schema), covers both. The
// families are pgmetrics' own:
//
//	actorpool_actor_tasks_completed_total      tasks whose completion the server confirmed
//	actorpool_actor_tasks_dead_lettered_total  tasks moved to the dead letters
//	actorpool_actor_attempts_failed_total      failed handler attempts
//	actorpool_actor_retries_total              retries scheduled
//	actorpool_actor_queued_tasks               ready, not yet delivered to a worker
//	actorpool_actor_retrying_tasks             waiting for their backoff
//	actorpool_actor_running_tasks              delivered and not yet acknowledged (a dead worker's too, until its lease passes)
//	actorpool_actor_oldest_queued_seconds      the longest wait of a ready task
//	actorpool_actor_workers                    this process's workers (AddActor only)
//	actorpool_actor_busy_workers               of which in a handler (AddActor only)
//	actorpool_actor_tasks_accepted_total       tasks stored by sends and by replays
//	actorpool_actor_tasks_replayed_total       dead letters replayed (counted as accepted too)
//	actorpool_actor_lost_runs_total            runs taken over after their worker's lease ran out
//	actorpool_actor_scheduled_tasks            sent to run later or snoozed, not yet due
//	actorpool_actor_dead_letters               dead letters stored now
//	actorpool_actor_paused                     1 while the actor is paused (jsactor's Actor.Pause), else 0
//
// The help of actorpool_actor_paused names pgactor's Admin.Pause: a
// registry refuses one family with two helps, and both collectors may
// share one.
//
// The counters and the task gauges are the actor's across every process
// that runs it: each replica that exports them reports the same values, so
// aggregate them with max by (actor, prefix), not sum — or export them from
// one process only. The worker gauges are each process's own, to be summed.
//
// The collector describes no metrics to the registry: it is "unchecked",
// for the reason pgmetrics' is: its families share names with those of
// metrics.Collector, which lack the prefix label, and a registry refuses
// two collectors that describe one name with different labels.
package jsmetrics
