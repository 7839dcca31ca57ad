package jsactor_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/jsactor/jsserver"
	"github.com/actorpool/actorpool/oteltask"
	"github.com/nats-io/nats.go"
)

// spansNamed waits until n spans called name have ended in rec, and
// returns them in the order they ended.
func spansNamed(t *testing.T, rec *tracetest.InMemoryExporter, name string, n int) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var out tracetest.SpanStubs
		for _, s := range rec.GetSpans() {
			if s.Name == name {
				out = append(out, s)
			}
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spans %q ended, want %d", len(out), name, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func attrOf(s tracetest.SpanStub, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// TestOpenTelemetryOneTrace sends a task inside a request's span on one
// connection, with one tracer provider — one process — and runs it on
// another: the handler's span is in the request's trace, a remote child
// of the send's span, and sees the request's baggage. The task fails for
// good, and its replay's attempt is another child of the same send span.
func TestOpenTelemetryOneTrace(t *testing.T) {
	srv, err := jsserver.Start(jsserver.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	provider := func() (*tracetest.InMemoryExporter, *sdktrace.TracerProvider) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		t.Cleanup(func() { tp.Shutdown(context.Background()) })
		return exp, tp
	}
	start := func(h actor.Handler[string], tp trace.TracerProvider) *jsactor.Actor[string] {
		nc, err := nats.Connect(srv.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		a, err := jsactor.New(ctx, nc, "mail", h, jsactor.Config[string]{
			Tracer:  oteltask.NewTracer("jsactor", oteltask.WithTracerProvider(tp)),
			OnError: func(*actor.TaskError) {},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := a.Close(cctx); err != nil {
				t.Errorf("Close: %v", err)
			}
			nc.Close()
		})
		return a
	}
	web, webTP := provider()
	jobs, jobsTP := provider()
	sender := start(nil, webTP)

	type seen struct {
		span trace.SpanContext
		user string
	}
	handled := make(chan seen, 2)
	var healed atomic.Bool
	worker := start(func(ctx context.Context, task actor.Task[string]) error {
		handled <- seen{trace.SpanContextFromContext(ctx), baggage.FromContext(ctx).Member("user").Value()}
		if !healed.Load() {
			return actor.Permanent(errors.New("mailbox full"))
		}
		return nil
	}, jobsTP)

	member, _ := baggage.NewMember("user", "ann")
	bag, _ := baggage.New(member)
	rctx, request := webTP.Tracer("test").Start(baggage.ContextWithBaggage(ctx, bag), "request")
	id, err := sender.Send(rctx, "welcome", jsactor.WithType("welcome-mail"))
	if err != nil {
		t.Fatal(err)
	}
	request.End()

	send := spansNamed(t, web, "send mail", 1)[0]
	req := request.SpanContext()
	if send.SpanKind != trace.SpanKindProducer || send.Parent.SpanID() != req.SpanID() || send.SpanContext.TraceID() != req.TraceID() {
		t.Errorf("send span: kind %v, parent %v, trace %v; want a producer, child of the request %v", send.SpanKind, send.Parent.SpanID(), send.SpanContext.TraceID(), req.SpanID())
	}
	for key, want := range map[attribute.Key]string{
		"messaging.system": "jsactor", "messaging.destination.name": "mail", "messaging.message.id": strconv.FormatUint(id, 10), oteltask.TaskTypeKey: "welcome-mail",
	} {
		if got := attrOf(send, key).AsString(); got != want {
			t.Errorf("send span: %s = %q, want %q", key, got, want)
		}
	}

	checkAttempt := func(s tracetest.SpanStub, got seen, outcome string) {
		t.Helper()
		if s.SpanKind != trace.SpanKindConsumer || s.SpanContext.TraceID() != req.TraceID() ||
			s.Parent.SpanID() != send.SpanContext.SpanID() || !s.Parent.IsRemote() {
			t.Errorf("process span: kind %v, trace %v, parent %v (remote %v); want a consumer in the request's trace %v, remote child of the send span %v",
				s.SpanKind, s.SpanContext.TraceID(), s.Parent.SpanID(), s.Parent.IsRemote(), req.TraceID(), send.SpanContext.SpanID())
		}
		if !got.span.Equal(s.SpanContext) || got.user != "ann" {
			t.Errorf("the handler's span %v and baggage user=%q, want the process span %v and ann", got.span.SpanID(), got.user, s.SpanContext.SpanID())
		}
		if o := attrOf(s, oteltask.OutcomeKey).AsString(); o != outcome || attrOf(s, "messaging.system").AsString() != "jsactor" {
			t.Errorf("process span: outcome %q, system %q; want %q, jsactor", o, attrOf(s, "messaging.system").Emit(), outcome)
		}
	}
	first := spansNamed(t, jobs, "process mail", 1)[0]
	checkAttempt(first, <-handled, "dead_lettered")
	if r := attrOf(first, oteltask.ReasonKey).AsString(); r != jsactor.ReasonPermanent.String() || first.Status.Code != codes.Error {
		t.Errorf("dead-lettered attempt: reason %q, status %v; want %q, Error", r, first.Status, jsactor.ReasonPermanent)
	}

	healed.Store(true)
	var letters []jsactor.DeadLetter[string]
	for deadline := time.Now().Add(10 * time.Second); len(letters) == 0; time.Sleep(10 * time.Millisecond) {
		if letters, err = worker.DeadLetters(ctx, jsactor.LetterFilter{}); err != nil || time.Now().After(deadline) {
			t.Fatalf("no dead letter: %v", err)
		}
	}
	if _, err := worker.Replay(ctx, letters[0].ID); err != nil {
		t.Fatal(err)
	}
	replayed := spansNamed(t, jobs, "process mail", 2)[1]
	checkAttempt(replayed, <-handled, "completed")
}
