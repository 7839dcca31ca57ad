// Package oteltask traces and measures the tasks of durable actors with
// OpenTelemetry: its [Tracer] implements tasktrace.Tracer, the hook of
// package jsactor (jsactor.Config.Tracer), and package otelpgactor wraps
// it for pgactor. It is a package of its own so that programs that import
// only an actor do not compile OpenTelemetry.
//
// Each send makes a producer span, "send <actor>", a child of the span in
// the send's context, and writes that span's context and the context's
// baggage, through the propagator (W3C Trace Context and Baggage by
// default), into the headers the task carries. When a worker of any
// process takes the task up, the Tracer there reads them back and starts
// a consumer span, "process <actor>", whose parent is the send's span — a
// remote parent, so that the attempt is in the request's trace — and the
// handler's context carries that span and the sender's baggage. A
// dead-lettered task keeps its headers, and a replayed one's attempts are
// further children of the same send span.
//
// Each attempt's span ends with actorpool.task.outcome (tasktrace.Outcome:
// completed, retried, dead_lettered, canceled, lost, given_back, snoozed),
// actorpool.task.reason for a dead letter, the handler's error recorded as
// an exception event with error.type, and status Error for every outcome
// but completed, given_back and snoozed. The spans follow OpenTelemetry's
// semantic conventions for messaging (semconv v1.43.0) where they apply:
// messaging.system is the backend NewTracer is given ("jsactor",
// "pgactor"), messaging.destination.name the actor, messaging.message.id
// the task's ID.
//
// The Tracer measures each attempt, on the meter provider given (the
// global one by default): messaging.process.duration and
// actorpool.task.attempts by outcome and error.type, and
// actorpool.task.queue_time, from when the task became due
// (tasktrace.AttemptInfo.Due) to the attempt's start. Package
// otelpgactor's documentation lists the attributes in full.
package oteltask
