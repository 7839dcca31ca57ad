package otelpgactor_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgactor/otelpgactor"
)

// process is one process's tracing: a provider whose ended spans are
// recorded.
type process struct {
	spans *tracetest.SpanRecorder
	tp    *sdktrace.TracerProvider
}

func newProcess(t testing.TB) process {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return process{spans, tp}
}

// named returns the ended spans called name.
func (p process) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range p.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// waitSpans waits until n spans called name have ended, and returns them.
func (p process) waitSpans(t testing.TB, name string, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, strconv.Itoa(n)+" spans "+name, func() bool { return len(p.named(name)) >= n })
	return p.named(name)
}

func attrOf(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// checkAttrs fails t for each attribute of want that s lacks or has
// otherwise.
func checkAttrs(t testing.TB, s sdktrace.ReadOnlySpan, want ...attribute.KeyValue) {
	t.Helper()
	for _, kv := range want {
		if got := attrOf(s, kv.Key); got != kv.Value {
			t.Errorf("span %q: %s = %q, want %q", s.Name(), kv.Key, got.Emit(), kv.Value.Emit())
		}
	}
}

// TestOneTraceAcrossProcesses sends a task inside a request's span in one
// process and runs it in another — another pool, another tracer provider
// — and checks that the handler's span is in the request's trace, a child
// of the send's span, and that the handler sees the request's baggage.
func TestOneTraceAcrossProcesses(t *testing.T) {
	testenv.CheckGoroutines(t)
	web, jobs := newProcess(t), newProcess(t)
	webPool := newPool(t)
	schema := newSchema(t, webPool)
	sender := start[string](t, webPool, schema, "mail", nil, pgactor.Config[string]{
		Tracer: otelpgactor.NewTracer(otelpgactor.WithTracerProvider(web.tp)),
	})

	member, _ := baggage.NewMember("user", "ann")
	bag, _ := baggage.New(member)
	ctx, request := web.tp.Tracer("test").Start(baggage.ContextWithBaggage(t.Context(), bag), "request")
	id, err := sender.Send(ctx, "welcome", pgactor.WithType("welcome-mail"))
	if err != nil {
		t.Fatal(err)
	}
	request.End()

	type seen struct {
		span trace.SpanContext
		user string
	}
	handled := make(chan seen, 1)
	start(t, newPool(t), schema, "mail", func(ctx context.Context, task actor.Task[string]) error {
		handled <- seen{trace.SpanContextFromContext(ctx), baggage.FromContext(ctx).Member("user").Value()}
		return nil
	}, pgactor.Config[string]{Tracer: otelpgactor.NewTracer(otelpgactor.WithTracerProvider(jobs.tp))})

	var got seen
	select {
	case got = <-handled:
	case <-time.After(20 * time.Second):
		t.Fatal("the handler did not run")
	}
	send := web.waitSpans(t, "send mail", 1)[0]
	process := jobs.waitSpans(t, "process mail", 1)[0]
	req := request.SpanContext()

	if send.SpanKind() != trace.SpanKindProducer || send.Parent().SpanID() != req.SpanID() || send.SpanContext().TraceID() != req.TraceID() {
		t.Errorf("send span: kind %v, parent %v, trace %v; want a producer, child of the request %v", send.SpanKind(), send.Parent().SpanID(), send.SpanContext().TraceID(), req.SpanID())
	}
	checkAttrs(t, send,
		attribute.String("messaging.system", "pgactor"), attribute.String("messaging.operation.name", "send"),
		attribute.String("messaging.operation.type", "send"), attribute.String("messaging.destination.name", "mail"),
		attribute.String("messaging.message.id", strconv.FormatUint(id, 10)), otelpgactor.TaskTypeKey.String("welcome-mail"))

	if process.SpanKind() != trace.SpanKindConsumer {
		t.Errorf("process span of kind %v, want consumer", process.SpanKind())
	}
	if process.SpanContext().TraceID() != req.TraceID() {
		t.Errorf("process span in trace %v, want the request's, %v", process.SpanContext().TraceID(), req.TraceID())
	}
	if p := process.Parent(); p.SpanID() != send.SpanContext().SpanID() || !p.IsRemote() {
		t.Errorf("process span's parent %v (remote %v), want the send span %v, remote", p.SpanID(), p.IsRemote(), send.SpanContext().SpanID())
	}
	checkAttrs(t, process,
		attribute.String("messaging.system", "pgactor"), attribute.String("messaging.operation.name", "process"),
		attribute.String("messaging.operation.type", "process"), attribute.String("messaging.destination.name", "mail"),
		attribute.String("messaging.message.id", strconv.FormatUint(id, 10)), otelpgactor.TaskTypeKey.String("welcome-mail"),
		otelpgactor.TaskAttemptKey.Int(1), otelpgactor.OutcomeKey.String("completed"))
	if process.Status().Code != codes.Unset {
		t.Errorf("process span's status %v, want unset", process.Status())
	}
	if !got.span.Equal(process.SpanContext()) {
		t.Errorf("the handler's span %v, want the process span %v", got.span.SpanID(), process.SpanContext().SpanID())
	}
	if got.user != "ann" {
		t.Errorf("the handler's baggage has user=%q, want ann", got.user)
	}
}

// TestAttemptSpans checks the spans of a task's attempts: one per attempt,
// each a child of the send's span, with its outcome and status — a
// failure retried, a success, a dead letter — and that a replayed task's
// attempt continues its trace.
func TestAttemptSpans(t *testing.T) {
	testenv.CheckGoroutines(t)
	p := newProcess(t)
	pool := newPool(t)
	schema := newSchema(t, pool)
	tracer := otelpgactor.NewTracer(otelpgactor.WithTracerProvider(p.tp))
	errBroken := errors.New("broken")
	var healed = make(chan struct{})
	a := start(t, pool, schema, "jobs", func(ctx context.Context, task actor.Task[string]) error {
		switch {
		case task.Payload == "flaky" && task.Attempt == 1:
			return errBroken
		case task.Payload == "broken":
			select {
			case <-healed:
				return nil
			default:
				return actor.Permanent(errBroken)
			}
		}
		return nil
	}, pgactor.Config[string]{Tracer: tracer, MaxAttempts: 2})

	flaky, err := a.Send(t.Context(), "flaky")
	if err != nil {
		t.Fatal(err)
	}
	broken, err := a.Send(t.Context(), "broken")
	if err != nil {
		t.Fatal(err)
	}
	ofTask := func(id uint64, n int) []sdktrace.ReadOnlySpan {
		t.Helper()
		msg := attribute.StringValue(strconv.FormatUint(id, 10))
		var out []sdktrace.ReadOnlySpan
		testenv.Eventually(t, 20*time.Second, "the task's attempt spans", func() bool {
			out = out[:0]
			for _, s := range p.named("process jobs") {
				if attrOf(s, "messaging.message.id") == msg {
					out = append(out, s)
				}
			}
			return len(out) >= n
		})
		if len(out) != n {
			t.Fatalf("task %d has %d attempt spans, want %d", id, len(out), n)
		}
		return out
	}
	sendOf := func(id uint64) sdktrace.ReadOnlySpan {
		for _, s := range p.named("send jobs") {
			if attrOf(s, "messaging.message.id") == attribute.StringValue(strconv.FormatUint(id, 10)) {
				return s
			}
		}
		t.Fatalf("no send span for task %d", id)
		return nil
	}
	checkAttempt := func(s sdktrace.ReadOnlySpan, send sdktrace.ReadOnlySpan, attempt int, outcome string, status codes.Code, failed bool) {
		t.Helper()
		if s.Parent().SpanID() != send.SpanContext().SpanID() || s.SpanContext().TraceID() != send.SpanContext().TraceID() {
			t.Errorf("attempt %d's span is not a child of its send's", attempt)
		}
		checkAttrs(t, s, otelpgactor.TaskAttemptKey.Int(attempt), otelpgactor.OutcomeKey.String(outcome))
		if s.Status().Code != status {
			t.Errorf("attempt %d: status %v, want %v", attempt, s.Status(), status)
		}
		var exception bool
		for _, e := range s.Events() {
			exception = exception || e.Name == "exception"
		}
		if exception != failed {
			t.Errorf("attempt %d: an exception event: %v, want %v", attempt, exception, failed)
		}
	}

	spans := ofTask(flaky, 2)
	checkAttempt(spans[0], sendOf(flaky), 1, "retried", codes.Error, true)
	if spans[0].Status().Description != "retried: broken" {
		t.Errorf("failed attempt's status description %q, want %q", spans[0].Status().Description, "retried: broken")
	}
	checkAttempt(spans[1], sendOf(flaky), 2, "completed", codes.Unset, false)

	spans = ofTask(broken, 1)
	checkAttempt(spans[0], sendOf(broken), 1, "dead_lettered", codes.Error, true)
	checkAttrs(t, spans[0], otelpgactor.ReasonKey.String(pgactor.ReasonPermanent.String()))

	close(healed)
	if _, err := a.Replay(t.Context(), broken); err != nil {
		t.Fatal(err)
	}
	spans = ofTask(broken, 2)
	checkAttempt(spans[1], sendOf(broken), 1, "completed", codes.Unset, false)
}

// TestBatchSendSpan checks the one span of a batch send: its count and
// the IDs it stored, and that each task's attempt is its child.
func TestBatchSendSpan(t *testing.T) {
	testenv.CheckGoroutines(t)
	p := newProcess(t)
	pool := newPool(t)
	schema := newSchema(t, pool)
	tracer := otelpgactor.NewTracer(otelpgactor.WithTracerProvider(p.tp))
	a := start(t, pool, schema, "batch", func(context.Context, actor.Task[int]) error { return nil }, pgactor.Config[int]{Tracer: tracer})
	ids, err := a.SendBatch(t.Context(), []int{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	send := p.waitSpans(t, "send batch", 1)[0]
	checkAttrs(t, send, attribute.Int("messaging.batch.message_count", 3),
		otelpgactor.TaskIDsKey.Int64Slice([]int64{int64(ids[0]), int64(ids[1]), int64(ids[2])}))
	for _, s := range p.waitSpans(t, "process batch", 3) {
		if s.Parent().SpanID() != send.SpanContext().SpanID() {
			t.Errorf("attempt span %v is not a child of the batch's send span", attrOf(s, "messaging.message.id").Emit())
		}
	}
}

// TestFailedSendSpan checks that a refused send ends its span with the
// error.
func TestFailedSendSpan(t *testing.T) {
	testenv.CheckGoroutines(t)
	p := newProcess(t)
	pool := newPool(t)
	schema := newSchema(t, pool)
	a := start[int](t, pool, schema, "unique", nil, pgactor.Config[int]{Tracer: otelpgactor.NewTracer(otelpgactor.WithTracerProvider(p.tp))})
	if _, err := a.Send(t.Context(), 1, pgactor.UniqueKey("k")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(t.Context(), 2, pgactor.UniqueKey("k")); !errors.Is(err, pgactor.ErrDuplicate) {
		t.Fatalf("second send: %v, want ErrDuplicate", err)
	}
	spans := p.named("send unique")
	if len(spans) != 2 || spans[0].Status().Code != codes.Unset || spans[1].Status().Code != codes.Error {
		t.Fatalf("send spans %v, want two, the second with status Error", spans)
	}
	checkAttrs(t, spans[1], attribute.String("error.type", "*pgactor.DuplicateError"))
}
