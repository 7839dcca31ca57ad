package otelpgactor

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/actorpool/actorpool/actor/tasktrace"
	"github.com/actorpool/actorpool/oteltask"
	"github.com/actorpool/actorpool/pgactor"
)

// ScopeName is the instrumentation scope of the package's tracer and
// meter.
const ScopeName = "github.com/actorpool/actorpool/pgactor/otelpgactor"

// System is the value of messaging.system on every span and measure.
const System = "pgactor"

// Attributes of the package's own, where the semantic conventions have
// none: package oteltask's, which jsactor's spans share, and the state of
// RegisterMetrics's gauge.
const (
	TaskTypeKey    = oteltask.TaskTypeKey                  // the task's type
	TaskAttemptKey = oteltask.TaskAttemptKey               // the attempt's number, from 1
	TaskLostKey    = oteltask.TaskLostKey                  // the task's runs that lost their worker, when any
	TaskIDsKey     = oteltask.TaskIDsKey                   // the IDs a batch send stored
	OutcomeKey     = oteltask.OutcomeKey                   // pgactor.Outcome's String: completed, retried, dead_lettered, canceled, lost, given_back, snoozed
	ReasonKey      = oteltask.ReasonKey                    // pgactor.Reason's String, for a dead-lettered task
	StateKey       = attribute.Key("actorpool.task.state") // queued, scheduled, running or retrying, on actorpool.actor.tasks
)

// A Tracer is a pgactor.Tracer that traces sends and attempts with
// OpenTelemetry spans, carries the sender's trace context and baggage
// to the handler in the task's headers, and measures attempts: package
// oteltask's Tracer, with messaging.system "pgactor" and this package's
// scope. It is safe for use by many goroutines and actors. Set it as
// pgactor.Config.Tracer of every actor, sending or running, whose tasks
// it should follow.
type Tracer struct {
	t *oteltask.Tracer
}

var _ pgactor.Tracer = (*Tracer)(nil)

// An Option configures NewTracer and RegisterMetrics.
type Option = oteltask.Option

// WithTracerProvider makes the spans with tp instead of the global
// provider (otel.GetTracerProvider). A nil tp leaves the global one.
func WithTracerProvider(tp trace.TracerProvider) Option { return oteltask.WithTracerProvider(tp) }

// WithMeterProvider makes the instruments with mp instead of the global
// provider (otel.GetMeterProvider). A nil mp leaves the global one.
func WithMeterProvider(mp metric.MeterProvider) Option { return oteltask.WithMeterProvider(mp) }

// WithPropagator writes and reads the tasks' headers with p instead of
// W3C Trace Context and Baggage. Pass otel.GetTextMapPropagator() for the
// global one. Senders and workers must agree.
func WithPropagator(p propagation.TextMapPropagator) Option { return oteltask.WithPropagator(p) }

// withScope puts this package's scope ahead of opts.
func withScope(opts []Option) []Option {
	return append([]Option{oteltask.WithScope(ScopeName)}, opts...)
}

// NewTracer returns a Tracer on the global providers, or those opts give.
// An instrument the meter refuses is reported to otel.Handle and left
// out; the Tracer still traces.
func NewTracer(opts ...Option) *Tracer {
	return &Tracer{oteltask.NewTracer(System, withScope(opts)...)}
}

// StartSend starts a producer span, "send <actor>", as a child of the
// span in ctx, and returns the headers that carry it, and ctx's baggage,
// to the handler.
func (t *Tracer) StartSend(ctx context.Context, info pgactor.SendInfo) (context.Context, map[string]string, func([]uint64, error)) {
	return t.t.StartSend(ctx, info)
}

// StartAttempt starts a consumer span, "process <actor>", whose parent is
// the send's span that headers carry — a remote parent, in the sender's
// trace — and puts the headers' baggage in the handler's context. It
// records the attempt's time in queue, since info.Due, and
// when the attempt ends, its duration and outcome; an attempt that did
// not complete, nor was given back at Close or snoozed, ends its span
// with status Error.
func (t *Tracer) StartAttempt(ctx context.Context, info pgactor.AttemptInfo, headers map[string]string) (context.Context, func(pgactor.AttemptResult)) {
	ctx, end := t.t.StartAttempt(ctx, info, headers)
	return ctx, func(res pgactor.AttemptResult) {
		r := tasktrace.AttemptResult{Outcome: res.Outcome, Err: res.Err}
		if res.Reason != 0 {
			r.Reason = res.Reason
		}
		end(r)
	}
}
