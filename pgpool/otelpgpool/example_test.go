package otelpgpool_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5/tracelog"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/actorpool/actorpool/pgpool"
	"github.com/actorpool/actorpool/pgpool/otelpgpool"
)

// A pool traced and measured with OpenTelemetry: one Tracer, set as the
// ConnConfig's Tracer, makes the takes' spans and passes the statements
// on to the statement tracer the service already had, and
// RegisterMetrics reports the pool's Stats.
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

	cfg, err := pgpool.ParseConfig(os.Getenv("ACTORPOOL_POSTGRES"))
	if err != nil {
		log.Fatal(err)
	}
	cfg.Pool.Name = "users" // db.client.connection.pool.name
	cfg.MaxConns = 8
	// The statement tracer the service already had: otelpgx.NewTracer()
	// goes here the same way; pgx's tracelog is used here.
	statements := &tracelog.TraceLog{
		LogLevel: tracelog.LogLevelInfo,
		Logger: tracelog.LoggerFunc(func(_ context.Context, _ tracelog.LogLevel, msg string, data map[string]any) {
			if msg == "Query" {
				fmt.Println("statement tracer:", data["sql"])
			}
		}),
	}
	cfg.ConnConfig.Tracer = otelpgpool.NewTracer(statements, otelpgpool.WithTracerProvider(tp))
	pool, err := pgpool.NewWithConfig(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	reg, err := otelpgpool.RegisterMetrics(mp.Meter(otelpgpool.ScopeName), pool)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Unregister()

	// A request's span, with the take's span under it.
	reqCtx, req := tp.Tracer("users-service").Start(ctx, "GET /users")
	if _, err := pool.Exec(reqCtx, "SELECT 1"); err != nil {
		log.Fatal(err)
	}
	req.End()
	for _, s := range spans.Ended() {
		if s.Parent().SpanID() == req.SpanContext().SpanID() {
			fmt.Printf("span %q, child of %q\n", s.Name(), "GET /users")
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch m.Name {
		case "db.client.connection.max", "actorpool.pool.acquires":
			fmt.Println(m.Name, m.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
		}
	}
	// Output:
	// statement tracer: SELECT 1
	// span "pool.acquire", child of "GET /users"
	// db.client.connection.max 8
	// actorpool.pool.acquires 1
}
