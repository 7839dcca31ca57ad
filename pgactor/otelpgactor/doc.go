// Package otelpgactor traces and measures pgactor's durable actors with
// OpenTelemetry: a span for each send and each attempt, the sender's trace
// context carried with the task to the handler, in whatever process runs
// it, and metrics of the queue's depth, the time tasks wait in it, how
// long attempts take and how they end. It is a package of its own so
// that programs that import only pgactor do not compile OpenTelemetry.
// Its Tracer is package oteltask's, which traces jsactor's actors too,
// with this package's scope and messaging.system "pgactor".
//
// # Traces
//
// A Tracer, set as pgactor.Config.Tracer, starts a producer span named
// "send <actor>" for each Send, SendTx, SendBatch and SendBatchTx, as a
// child of the span in the send's context, and writes that span's context
// and the context's baggage, through the propagator (W3C Trace Context
// and Baggage by default), into headers that the send stores with each
// task. When a worker of any process takes the task up, the Tracer there
// reads the headers back and starts a consumer span named
// "process <actor>" whose parent is the send's span — a remote parent,
// so the attempt is in the request's trace — and the handler's context
// carries that span and the sender's baggage. One trace runs from the
// request to each attempt of its task, however many processes and
// retries lie between.
//
// Each attempt has its own span. It ends once the attempt's outcome is
// recorded, with actorpool.task.outcome set to completed, retried,
// dead_lettered, canceled, lost, given_back or snoozed (pgactor.Outcome), the
// handler's error recorded as an exception event with error.type, and
// status Error for every outcome but completed, given_back and snoozed (Close
// gave the task back for another process, its attempt not charged); its
// description is the outcome and the error. A dead-lettered task keeps
// its headers, and a replayed one continues its send's trace: its next
// attempt is another child of the same send span, rather than a link
// from a trace of the replay's own, so that one trace holds all of a
// task's history.
//
// The spans follow OpenTelemetry's semantic conventions for messaging
// (semconv v1.43.0) where they apply: messaging.system is "pgactor",
// messaging.destination.name the actor, messaging.operation.name and
// .type send or process, messaging.message.id the task's ID,
// messaging.batch.message_count a batch's size. The rest is under
// actorpool.task: type, attempt, lost, ids (a batch send's), outcome and
// reason.
//
// # Metrics
//
// The Tracer measures each attempt, on the meter provider given (the
// global one by default):
//
//	messaging.process.duration  histogram, s: the attempt, from its start to its recorded outcome, with actorpool.task.outcome and error.type
//	actorpool.task.attempts     counter: attempts that ended, with actorpool.task.outcome and error.type
//	actorpool.task.queue_time   histogram, s: from when a task became due to the start of its attempt, every attempt
//
// each with messaging.system, messaging.operation.name, messaging.destination.name
// and actorpool.task.type. The time in queue is measured for every
// attempt, from when the fetch found the task due, by the database's
// clock, against the worker's: for a first attempt — after a send, or a
// replay — the send time, RunAt, or the send time plus After; for a retry,
// the end of its backoff; for a run after a lost one, when the lost run's
// lease ran out (AttemptInfo.Due).
//
// RegisterMetrics reports an actor's depth, across all its processes, as
// gauges read from one Actor.Stats query per collection:
// actorpool.actor.tasks by actorpool.task.state (queued, scheduled,
// running, retrying), actorpool.actor.dead_letters and
// actorpool.actor.oldest_queued. Register it in one process per actor
// (any one, since the numbers are the actor's everywhere), or aggregate
// with max.
package otelpgactor
