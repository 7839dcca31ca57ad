package oteltask_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/actorpool/actorpool/actor/tasktrace"
	"github.com/actorpool/actorpool/oteltask"
)

// reason is a backend's dead-letter reason.
type reason uint8

func (reason) String() string { return "max attempts" }

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// TestSendToAttempt sends in a request's span and starts an attempt in
// another provider — another process — with the headers the send
// returned, ending it with each outcome; it checks that the attempt's
// span is the send's child, in the request's trace, that the handler's
// context has the baggage, and each outcome's attributes, status and
// measures.
func TestSendToAttempt(t *testing.T) {
	errBroken := errors.New("broken")
	for _, c := range []struct {
		name      string
		res       tasktrace.AttemptResult
		status    codes.Code
		desc      string
		reason    string
		exception bool
	}{
		{"completed", tasktrace.AttemptResult{Outcome: tasktrace.OutcomeCompleted}, codes.Unset, "", "", false},
		{"retried", tasktrace.AttemptResult{Outcome: tasktrace.OutcomeRetried, Err: errBroken}, codes.Error, "retried: broken", "", true},
		{"dead lettered", tasktrace.AttemptResult{Outcome: tasktrace.OutcomeDeadLettered, Reason: reason(1), Err: errBroken},
			codes.Error, "dead_lettered: broken", "max attempts", true},
		{"lost", tasktrace.AttemptResult{Outcome: tasktrace.OutcomeLost}, codes.Error, "lost", "", false},
		{"given back", tasktrace.AttemptResult{Outcome: tasktrace.OutcomeGivenBack, Err: context.Canceled}, codes.Unset, "", "", true},
		{"snoozed", tasktrace.AttemptResult{Outcome: tasktrace.OutcomeSnoozed, Err: errors.New("snoozed for 1s")}, codes.Unset, "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			web, jobs := tracetest.NewSpanRecorder(), tracetest.NewSpanRecorder()
			webTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(web))
			jobsTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(jobs))
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			sender := oteltask.NewTracer("jsactor", oteltask.WithTracerProvider(webTP))
			worker := oteltask.NewTracer("jsactor", oteltask.WithTracerProvider(jobsTP), oteltask.WithMeterProvider(mp))

			member, _ := baggage.NewMember("user", "ann")
			bag, _ := baggage.New(member)
			ctx, request := webTP.Tracer("test").Start(baggage.ContextWithBaggage(t.Context(), bag), "request")
			_, headers, endSend := sender.StartSend(ctx, tasktrace.SendInfo{Actor: "mail", Type: "welcome", Count: 1})
			endSend([]uint64{7}, nil)
			request.End()
			if headers["traceparent"] == "" || headers["baggage"] != "user=ann" {
				t.Fatalf("send headers %v, want a traceparent and baggage user=ann", headers)
			}

			hctx, end := worker.StartAttempt(t.Context(), tasktrace.AttemptInfo{
				Actor: "mail", Worker: "mail/1", ID: 7, Type: "welcome", Attempt: 2, Lost: 1, Due: time.Now().Add(-time.Second),
			}, headers)
			if got := baggage.FromContext(hctx).Member("user").Value(); got != "ann" {
				t.Errorf("the handler's baggage has user=%q, want ann", got)
			}
			end(c.res)

			send, process := web.Ended()[0], jobs.Ended()[0]
			if send.Name() != "send mail" || send.SpanKind() != trace.SpanKindProducer || send.Parent().SpanID() != request.SpanContext().SpanID() {
				t.Errorf("send span %q of kind %v, parent %v; want a producer \"send mail\", child of the request", send.Name(), send.SpanKind(), send.Parent().SpanID())
			}
			if p := process.Parent(); process.Name() != "process mail" || process.SpanKind() != trace.SpanKindConsumer ||
				p.SpanID() != send.SpanContext().SpanID() || !p.IsRemote() || process.SpanContext().TraceID() != request.SpanContext().TraceID() {
				t.Errorf("process span %q of kind %v, parent %v (remote %v); want a consumer \"process mail\", remote child of the send span %v, in the request's trace",
					process.Name(), process.SpanKind(), p.SpanID(), p.IsRemote(), send.SpanContext().SpanID())
			}
			if !trace.SpanContextFromContext(hctx).Equal(process.SpanContext()) {
				t.Error("the handler's context does not carry the process span")
			}
			for key, want := range map[attribute.Key]attribute.Value{
				"messaging.system":      attribute.StringValue("jsactor"),
				"messaging.message.id":  attribute.StringValue("7"),
				oteltask.TaskTypeKey:    attribute.StringValue("welcome"),
				oteltask.TaskAttemptKey: attribute.IntValue(2),
				oteltask.TaskLostKey:    attribute.IntValue(1),
				oteltask.OutcomeKey:     attribute.StringValue(c.res.Outcome.String()),
			} {
				if got := attr(process, key); got != want {
					t.Errorf("process span: %s = %q, want %q", key, got.Emit(), want.Emit())
				}
			}
			if got := attr(process, oteltask.ReasonKey).AsString(); got != c.reason {
				t.Errorf("process span: reason %q, want %q", got, c.reason)
			}
			if st := process.Status(); st.Code != c.status || st.Description != c.desc {
				t.Errorf("process span: status %v %q, want %v %q", st.Code, st.Description, c.status, c.desc)
			}
			var exception bool
			for _, e := range process.Events() {
				exception = exception || e.Name == "exception"
			}
			if exception != c.exception {
				t.Errorf("process span: an exception event %v, want %v", exception, c.exception)
			}

			var rm metricdata.ResourceMetrics
			if err := reader.Collect(t.Context(), &rm); err != nil {
				t.Fatal(err)
			}
			if sm := rm.ScopeMetrics; len(sm) != 1 || sm[0].Scope.Name != oteltask.ScopeName {
				t.Fatalf("scope metrics %+v, want one scope, %s", sm, oteltask.ScopeName)
			}
			seen := map[string]bool{}
			for _, m := range rm.ScopeMetrics[0].Metrics {
				seen[m.Name] = true
			}
			for _, name := range []string{"actorpool.task.queue_time", "messaging.process.duration", "actorpool.task.attempts"} {
				if !seen[name] {
					t.Errorf("no measure of %s", name)
				}
			}
		})
	}
}

// TestWithScope checks that a wrapping package's scope names the spans
// and the meter.
func TestWithScope(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tr := oteltask.NewTracer("pgactor", oteltask.WithTracerProvider(tp), oteltask.WithScope("wrapper"))
	_, _, end := tr.StartSend(t.Context(), tasktrace.SendInfo{Actor: "a", Count: 1})
	end(nil, errors.New("refused"))
	s := spans.Ended()[0]
	if s.InstrumentationScope().Name != "wrapper" || s.Status().Code != codes.Error || attr(s, "messaging.system").AsString() != "pgactor" {
		t.Errorf("send span of scope %q, status %v, system %q; want scope wrapper, status Error, system pgactor",
			s.InstrumentationScope().Name, s.Status(), attr(s, "messaging.system").Emit())
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	g, err := oteltask.Meter(oteltask.WithMeterProvider(mp), oteltask.WithScope("wrapper")).Int64Counter("c")
	if err != nil {
		t.Fatal(err)
	}
	g.Add(t.Context(), 1)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) != 1 || rm.ScopeMetrics[0].Scope.Name != "wrapper" {
		t.Errorf("scope metrics %+v, want one scope, wrapper", rm.ScopeMetrics)
	}
}

// TestNilOptions checks that nil providers and propagator leave the
// defaults in place, as OpenTelemetry's instrumentation libraries treat
// them, rather than panicking at the first span or measure.
func TestNilOptions(t *testing.T) {
	tr := oteltask.NewTracer("jsactor", oteltask.WithTracerProvider(nil), oteltask.WithMeterProvider(nil), oteltask.WithPropagator(nil))
	ctx, headers, end := tr.StartSend(t.Context(), tasktrace.SendInfo{Actor: "a", Count: 1})
	end([]uint64{1}, nil)
	_, endAttempt := tr.StartAttempt(ctx, tasktrace.AttemptInfo{Actor: "a", ID: 1, Attempt: 1, Due: time.Now()}, headers)
	endAttempt(tasktrace.AttemptResult{Outcome: tasktrace.OutcomeCompleted})
	if oteltask.Meter(oteltask.WithMeterProvider(nil)) == nil {
		t.Error("Meter with a nil provider returned nil")
	}
}
