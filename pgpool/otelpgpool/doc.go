// Package otelpgpool instruments a pgpool.Pool with OpenTelemetry: a span
// for each take of a connection, and the pool's gauges and counters as
// metrics. It is a package of its own so that programs that import only
// pgpool do not compile OpenTelemetry.
//
// # Traces
//
// A Tracer, set as the pool's Config.ConnConfig.Tracer, starts a span named
// "pool.acquire" (AcquireSpanName) when a take begins and ends it when the
// take ends, as a child of the span in the take's context; a take that
// fails records its error on the span and sets its status to Error. The
// span carries db.system.name, db.client.connection.pool.name,
// server.address, server.port and db.namespace. A take whose context holds
// no recording span starts none, as otelpgx does, so that work outside any
// trace leaves no root spans.
//
// pgx has one Tracer field per connection, so the Tracer passes every call
// of pgx's tracer interfaces (QueryTracer, BatchTracer, CopyFromTracer,
// PrepareTracer, ConnectTracer) and of pgpool's (AcquireTracer,
// ReleaseTracer) on to an inner tracer, such as otelpgx's, that implements
// them: one value traces both the pool and the statements.
//
// The take's span is the parent of what runs with the take's context: a
// ShouldPing ping, PrepareConn's statements. A connect the take waits for
// is not under it: the pool connects in the background, with the values
// of the context given to New, so the inner tracer's connect spans belong
// to no take.
//
// Give-backs make no span: pgxpool's ReleaseTracer, whose shape pgpool
// keeps, is told of a give-back without a context, so such a span could
// have no parent and would land as a trace of its own.
//
// # Metrics
//
// RegisterMetrics reports a pool's Stats, read once per collection, as
// observable instruments. Where OpenTelemetry's semantic conventions for
// database client connection pools (semconv v1.43.0) name a measure, it has
// that name, unit and meaning:
//
//	db.client.connection.count{state=idle|used}  connections idle (those being health-checked included) and lent out
//	db.client.connection.max                     MaxConns
//	db.client.connection.idle.min                MinIdleConns
//	db.client.connection.pending_requests        takes queued for a connection now
//	db.client.connection.timeouts                queued takes whose context's deadline passed
//
// The rest of Stats has no convention. It is reported under actorpool.pool,
// with the words of the metrics package's Prometheus names (acquires,
// waits, created, destroyed and its reasons, leaks) in OpenTelemetry's
// style: dots, no _total, the unit as the instrument's unit:
//
//	actorpool.pool.creating              connects in flight
//	actorpool.pool.destroying            connections being closed
//	actorpool.pool.acquires              takes that got a connection
//	actorpool.pool.empty_acquires        takes that found no idle connection
//	actorpool.pool.waits                 takes that queued for a connection
//	actorpool.pool.wait_time             total seconds takes spent queued
//	actorpool.pool.canceled_acquires     queued takes whose context was canceled
//	actorpool.pool.exhausted_acquires    takes refused because MaxQueueSize takes were queued
//	actorpool.pool.create_attempts       connects started
//	actorpool.pool.created               connections made
//	actorpool.pool.create_errors         connects that failed, panicked or timed out
//	actorpool.pool.create_timeouts       connects that outlived their timeout
//	actorpool.pool.tests                 health-check pings that returned
//	actorpool.pool.destroyed{actorpool.destroy.reason}  connections closed, by why
//	actorpool.pool.hijacked              connections taken out of the pool by Hijack
//	actorpool.pool.leaks                 connections found dropped by the garbage collector
//	actorpool.pool.suspected_leaks       connections held past LeakThreshold
//
// Every series carries db.client.connection.pool.name: the pool's
// Config.Pool.Name when set, or else server.address:server.port/db.namespace,
// as the conventions ask of a pool that has no name.
//
// The conventions' histograms (db.client.connection.wait_time, use_time,
// create_time) are not made from Stats, whose counters are totals, and
// db.client.connection.idle.max is not reported: the pool keeps no limit
// on idle connections but MaxConns.
package otelpgpool
