package oteltask

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/messagingconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/actorpool/actorpool/actor/tasktrace"
)

// ScopeName is the instrumentation scope of the package's tracer and
// meter, unless WithScope names another.
const ScopeName = "github.com/actorpool/actorpool/oteltask"

// Attributes of the package's own, where the semantic conventions have
// none.
const (
	TaskTypeKey    = attribute.Key("actorpool.task.type")    // the task's type
	TaskAttemptKey = attribute.Key("actorpool.task.attempt") // the attempt's number, from 1
	TaskLostKey    = attribute.Key("actorpool.task.lost")    // the task's runs that lost their worker, when any
	TaskIDsKey     = attribute.Key("actorpool.task.ids")     // the IDs a batch send stored
	OutcomeKey     = attribute.Key("actorpool.task.outcome") // tasktrace.Outcome's String: completed, retried, dead_lettered, canceled, lost, given_back, snoozed
	ReasonKey      = attribute.Key("actorpool.task.reason")  // the dead letter's reason, such as "max attempts", for a dead-lettered task
)

// A Tracer is a tasktrace.Tracer that traces sends and attempts with
// OpenTelemetry spans, carries the sender's trace context and baggage
// to the handler in the task's headers, and measures attempts. It is safe
// for use by many goroutines and actors. Set it as jsactor.Config.Tracer
// of every actor, sending or running, whose tasks it should follow (for
// pgactor, use package otelpgactor's).
type Tracer struct {
	system    string
	tracer    trace.Tracer
	prop      propagation.TextMapPropagator
	queueTime metric.Float64Histogram
	duration  messagingconv.ProcessDuration
	attempts  metric.Int64Counter
}

var _ tasktrace.Tracer = (*Tracer)(nil)

// An Option configures NewTracer and Meter.
type Option func(*options)

type options struct {
	tp    trace.TracerProvider
	mp    metric.MeterProvider
	prop  propagation.TextMapPropagator
	scope string
}

// WithTracerProvider makes the spans with tp instead of the global
// provider (otel.GetTracerProvider). A nil tp leaves the global one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) {
		if tp != nil {
			o.tp = tp
		}
	}
}

// WithMeterProvider makes the instruments with mp instead of the global
// provider (otel.GetMeterProvider). A nil mp leaves the global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) {
		if mp != nil {
			o.mp = mp
		}
	}
}

// WithPropagator writes and reads the tasks' headers with p instead of
// W3C Trace Context and Baggage. Pass otel.GetTextMapPropagator() for the
// global one. Senders and workers must agree. A nil p leaves W3C Trace
// Context and Baggage.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(o *options) {
		if p != nil {
			o.prop = p
		}
	}
}

// WithScope names the instrumentation scope of the spans and instruments
// instead of ScopeName: for a package that wraps this one and keeps a
// scope of its own, as otelpgactor does.
func WithScope(name string) Option {
	return func(o *options) { o.scope = name }
}

func newOptions(opts []Option) options {
	o := options{
		tp:    otel.GetTracerProvider(),
		mp:    otel.GetMeterProvider(),
		prop:  propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		scope: ScopeName,
	}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Meter returns the meter that a Tracer made with opts measures on: for
// instruments of a package's own beside the Tracer's, such as
// otelpgactor's RegisterMetrics.
func Meter(opts ...Option) metric.Meter {
	o := newOptions(opts)
	return o.meter()
}

func (o *options) meter() metric.Meter {
	return o.mp.Meter(o.scope, metric.WithSchemaURL(semconv.SchemaURL))
}

// durationBuckets are the histograms' bounds, in seconds: the semantic
// conventions' for durations, and minutes beyond them, which a queue's
// waits reach.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 300, 900, 3600}

// NewTracer returns a Tracer on the global providers, or those opts give,
// whose spans and measures have messaging.system set to system: the
// backend, "jsactor" (or "pgactor", as otelpgactor sets it). An
// instrument the meter refuses is reported to otel.Handle and left out;
// the Tracer still traces.
func NewTracer(system string, opts ...Option) *Tracer {
	o := newOptions(opts)
	t := &Tracer{
		system: system,
		tracer: o.tp.Tracer(o.scope, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:   o.prop,
	}
	m := o.meter()
	var err error
	if t.queueTime, err = m.Float64Histogram("actorpool.task.queue_time",
		metric.WithDescription("Time from when a task became due to the start of its attempt: after its send, RunAt or After, a retry's backoff, or a lost run's lease."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		otel.Handle(err)
	}
	if t.duration, err = messagingconv.NewProcessDuration(m, metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		otel.Handle(err)
	}
	if t.attempts, err = m.Int64Counter("actorpool.task.attempts",
		metric.WithDescription("Attempts that ended, by their outcome."), metric.WithUnit("{attempt}")); err != nil {
		otel.Handle(err)
	}
	return t
}

// StartSend starts a producer span, "send <actor>", as a child of the
// span in ctx, and returns the headers that carry it, and ctx's baggage,
// to the handler.
func (t *Tracer) StartSend(ctx context.Context, info tasktrace.SendInfo) (context.Context, map[string]string, func([]uint64, error)) {
	attrs := []attribute.KeyValue{
		semconv.MessagingSystemKey.String(t.system),
		semconv.MessagingOperationName("send"),
		semconv.MessagingOperationTypeSend,
		semconv.MessagingDestinationName(info.Actor),
		TaskTypeKey.String(info.Type),
	}
	if info.Batch {
		attrs = append(attrs, semconv.MessagingBatchMessageCount(info.Count))
	}
	ctx, span := t.tracer.Start(ctx, "send "+info.Actor, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
	headers := propagation.MapCarrier{}
	t.prop.Inject(ctx, headers)
	return ctx, headers, func(ids []uint64, err error) {
		switch {
		case info.Batch && len(ids) > 0:
			s := make([]int64, len(ids))
			for i, id := range ids {
				s[i] = int64(id)
			}
			span.SetAttributes(TaskIDsKey.Int64Slice(s))
		case len(ids) == 1:
			span.SetAttributes(semconv.MessagingMessageID(strconv.FormatUint(ids[0], 10)))
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
			span.SetAttributes(semconv.ErrorType(err))
		}
		span.End()
	}
}

// StartAttempt starts a consumer span, "process <actor>", whose parent is
// the send's span that headers carry — a remote parent, in the sender's
// trace — and puts the headers' baggage in the handler's context. It
// records the attempt's time in queue, since info.Due (none when it is
// zero), and when the attempt ends, its duration and outcome; an attempt
// that did not complete, nor was given back at Close or snoozed, ends its
// span with status Error.
func (t *Tracer) StartAttempt(ctx context.Context, info tasktrace.AttemptInfo, headers map[string]string) (context.Context, func(tasktrace.AttemptResult)) {
	start := time.Now()
	if headers != nil {
		ctx = t.prop.Extract(ctx, propagation.MapCarrier(headers))
	}
	common := []attribute.KeyValue{
		semconv.MessagingSystemKey.String(t.system),
		semconv.MessagingOperationName("process"),
		semconv.MessagingDestinationName(info.Actor),
		TaskTypeKey.String(info.Type),
	}
	attrs := append(common[:len(common):len(common)],
		semconv.MessagingOperationTypeProcess,
		semconv.MessagingMessageID(strconv.FormatUint(info.ID, 10)),
		TaskAttemptKey.Int(info.Attempt),
	)
	if info.Lost > 0 {
		attrs = append(attrs, TaskLostKey.Int(info.Lost))
	}
	ctx, span := t.tracer.Start(ctx, "process "+info.Actor, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	if !info.Due.IsZero() && t.queueTime != nil {
		t.queueTime.Record(ctx, max(start.Sub(info.Due), 0).Seconds(), metric.WithAttributes(common...))
	}
	return ctx, func(res tasktrace.AttemptResult) {
		end := time.Now()
		outcome := OutcomeKey.String(res.Outcome.String())
		span.SetAttributes(outcome)
		if res.Reason != nil {
			span.SetAttributes(ReasonKey.String(res.Reason.String()))
		}
		measured := append(common, outcome)
		if res.Err != nil && res.Outcome != tasktrace.OutcomeSnoozed { // a snooze is no error
			span.RecordError(res.Err, trace.WithTimestamp(end))
			measured = append(measured, semconv.ErrorType(res.Err))
			span.SetAttributes(semconv.ErrorType(res.Err))
		}
		switch res.Outcome {
		case tasktrace.OutcomeCompleted, tasktrace.OutcomeGivenBack, tasktrace.OutcomeSnoozed:
		default:
			desc := res.Outcome.String()
			if res.Err != nil {
				desc += ": " + res.Err.Error()
			}
			span.SetStatus(codes.Error, desc)
		}
		span.End(trace.WithTimestamp(end))
		set := metric.WithAttributes(measured...)
		if t.duration.Float64Histogram != nil {
			t.duration.Float64Histogram.Record(ctx, end.Sub(start).Seconds(), set)
		}
		if t.attempts != nil {
			t.attempts.Add(ctx, 1, set)
		}
	}
}
