package otelpgactor_test

import (
	"context"
	"fmt"
	"log"
	"os"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgactor/otelpgactor"
	"github.com/actorpool/actorpool/pgpool"
)

// A durable actor traced from the request that sent a task to the
// handler that ran it, and measured: one Tracer in the actor's Config,
// and RegisterMetrics for the queue's depth. Here sender and worker share
// a process; in two processes each sets its own Tracer, and the trace
// still runs from one to the other through the task's headers.
func Example() {
	ctx := context.Background()

	// A service's providers send to exporters (OTLP, Prometheus); here a
	// span recorder and a manual reader stand in, so that the example can
	// print what they got.
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(ctx)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)

	pool, err := pgpool.New(ctx, os.Getenv("ACTORPOOL_POSTGRES"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	const schema = "otelpgactor_example"
	if _, _, err := pgactor.Migrate(ctx, pool, schema); err != nil {
		log.Fatal(err)
	}
	defer pool.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")

	handled := make(chan trace.TraceID, 1)
	mail, err := pgactor.New(ctx, pool, "mail", func(ctx context.Context, task actor.Task[string]) error {
		// The handler's context carries its attempt's span, in the
		// sender's trace, and the sender's baggage.
		handled <- trace.SpanContextFromContext(ctx).TraceID()
		return nil
	}, pgactor.Config[string]{
		Schema: schema,
		Tracer: otelpgactor.NewTracer(otelpgactor.WithTracerProvider(tp), otelpgactor.WithMeterProvider(mp)),
	})
	if err != nil {
		log.Fatal(err)
	}
	depth, err := otelpgactor.RegisterMetrics(mail, otelpgactor.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}

	ctx, request := tp.Tracer("web").Start(ctx, "POST /signup")
	if _, err := mail.Send(ctx, "welcome"); err != nil {
		log.Fatal(err)
	}
	request.End()
	fmt.Println("handler in the request's trace:", <-handled == request.SpanContext().TraceID())

	depth.Unregister()
	if err := mail.Close(ctx); err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"POST /signup", "send mail", "process mail"} {
		for _, s := range spans.Ended() {
			if s.Name() == name {
				fmt.Printf("%s: %v, parent %v\n", name, s.SpanKind(), parentName(spans.Ended(), s))
			}
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		fmt.Println(m.Name)
	}
	// Output:
	// handler in the request's trace: true
	// POST /signup: internal, parent none
	// send mail: producer, parent POST /signup
	// process mail: consumer, parent send mail
	// actorpool.task.queue_time
	// messaging.process.duration
	// actorpool.task.attempts
}

// parentName returns the name of s's parent among spans.
func parentName(spans []sdktrace.ReadOnlySpan, s sdktrace.ReadOnlySpan) string {
	for _, p := range spans {
		if p.SpanContext().SpanID() == s.Parent().SpanID() {
			return p.Name()
		}
	}
	return "none"
}
