// Package metrics exports the gauges, counters and latency histograms of
// actorpool pools and actors to Prometheus.
//
// A [Collector] is a prometheus.Collector. Register it once, then add each
// pool and actor under a name, which becomes the "pool" or "actor" label of
// its series:
//
//	m := metrics.NewCollector(metrics.Options{})
//	prometheus.MustRegister(m)
//
//	cfg.Observer = m.PoolObserver("redis") // wait, hold, create and test times
//	pool, err := actorpool.New(factory, cfg)
//	...
//	m.AddPool("redis", pool.Stats) // gauges and counters, read at each scrape
//
//	audit, err := actor.New("audit", metrics.InstrumentHandler(m.ActorObserver("audit"), handle), acfg)
//	...
//	m.AddActor("audit", audit.Stats)
//
// Gauges and counters are read from Stats when Prometheus scrapes, so they
// cost nothing between scrapes. Histograms are fed as events happen: the
// pool's by its Config.Observer, which makes the pool read the clock on
// each take and give-back; the actor's by the handler that
// [InstrumentHandler] wraps.
//
// Every metric is named actorpool_pool_... or actorpool_actor_..., with its
// unit in its name: durations in seconds, counts of events ending in
// _total. [Collector.Describe] lists them all with their help.
//
// The durable actors of package pgactor are exported by package
// metrics/pgmetrics, and those of package jsactor by metrics/jsmetrics, in
// the same families where the meaning is the same; they are packages of
// their own so that this one compiles neither pgx nor the NATS client.
package metrics
