package otelpgpool

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/pgpool"
)

// AcquireSpanName is the name of the span of a take, otelpgx's for
// pgxpool's takes, so that queries and dashboards built on it carry over.
const AcquireSpanName = "pool.acquire"

// A Tracer traces a pgpool.Pool's takes with OpenTelemetry spans and
// passes every tracer call on to an inner tracer. Set it as the pool's
// Config.ConnConfig.Tracer. It is safe for use by many goroutines, and by
// several pools.
type Tracer struct {
	tracer trace.Tracer

	query    pgx.QueryTracer
	batch    pgx.BatchTracer
	copyFrom pgx.CopyFromTracer
	prepare  pgx.PrepareTracer
	connect  pgx.ConnectTracer
	acquire  pgpool.AcquireTracer
	release  pgpool.ReleaseTracer

	// last caches the span options of the pool last traced: reading them
	// from the pool copies its Config, too dear for every take.
	last atomic.Pointer[poolSpanOptions]
}

var (
	_ pgx.QueryTracer      = (*Tracer)(nil)
	_ pgx.BatchTracer      = (*Tracer)(nil)
	_ pgx.CopyFromTracer   = (*Tracer)(nil)
	_ pgx.PrepareTracer    = (*Tracer)(nil)
	_ pgx.ConnectTracer    = (*Tracer)(nil)
	_ pgpool.AcquireTracer = (*Tracer)(nil)
	_ pgpool.ReleaseTracer = (*Tracer)(nil)
)

type poolSpanOptions struct {
	pool *pgpool.Pool
	opts []trace.SpanStartOption
}

// An Option configures a Tracer.
type Option func(*Tracer)

// WithTracerProvider has the Tracer make its spans with tp instead of the
// global provider (otel.GetTracerProvider). A nil tp leaves the global one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(t *Tracer) {
		if tp != nil {
			t.tracer = newTracer(tp)
		}
	}
}

func newTracer(tp trace.TracerProvider) trace.Tracer {
	return tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))
}

// NewTracer returns a Tracer that passes each call of pgx's and pgpool's
// tracer interfaces on to inner, when inner implements that interface.
// inner may be nil: then the Tracer traces takes alone.
func NewTracer(inner pgx.QueryTracer, opts ...Option) *Tracer {
	t := &Tracer{query: inner}
	if inner != nil {
		t.batch, _ = inner.(pgx.BatchTracer)
		t.copyFrom, _ = inner.(pgx.CopyFromTracer)
		t.prepare, _ = inner.(pgx.PrepareTracer)
		t.connect, _ = inner.(pgx.ConnectTracer)
		t.acquire, _ = inner.(pgpool.AcquireTracer)
		t.release, _ = inner.(pgpool.ReleaseTracer)
	}
	for _, o := range opts {
		o(t)
	}
	if t.tracer == nil {
		t.tracer = newTracer(otel.GetTracerProvider())
	}
	return t
}

// acquireSpanKey keys the span a TraceAcquireStart started, so that
// TraceAcquireEnd ends that span, and not the caller's or one the inner
// tracer started.
type acquireSpanKey struct{}

// TraceAcquireStart starts the take's span, as a child of the span in ctx,
// when that span is recording, and then calls the inner tracer's, with the
// take's span in the context it is given.
func (t *Tracer) TraceAcquireStart(ctx context.Context, pool *pgpool.Pool, data pgpool.TraceAcquireStartData) context.Context {
	if trace.SpanFromContext(ctx).IsRecording() {
		var span trace.Span
		ctx, span = t.tracer.Start(ctx, AcquireSpanName, t.spanOptions(pool)...)
		ctx = context.WithValue(ctx, acquireSpanKey{}, span)
	} else if ctx.Value(acquireSpanKey{}) != nil {
		// A take nested in another's hooks, under a span that records
		// nothing: hide the outer take's span from this take's end.
		ctx = context.WithValue(ctx, acquireSpanKey{}, nil)
	}
	if t.acquire != nil {
		ctx = t.acquire.TraceAcquireStart(ctx, pool, data)
	}
	return ctx
}

// TraceAcquireEnd calls the inner tracer's, and then ends the take's
// span, recording the take's error on it if it failed.
func (t *Tracer) TraceAcquireEnd(ctx context.Context, pool *pgpool.Pool, data pgpool.TraceAcquireEndData) {
	if t.acquire != nil {
		t.acquire.TraceAcquireEnd(ctx, pool, data)
	}
	span, _ := ctx.Value(acquireSpanKey{}).(trace.Span)
	if span == nil {
		return
	}
	if err := data.Err; err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(errorType(err))
	}
	span.End()
}

// spanOptions returns the options of the spans of pool's takes.
func (t *Tracer) spanOptions(pool *pgpool.Pool) []trace.SpanStartOption {
	if last := t.last.Load(); last != nil && last.pool == pool {
		return last.opts
	}
	o := &poolSpanOptions{pool: pool, opts: []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(poolAttributes(pool.Config())...),
	}}
	t.last.Store(o)
	return o.opts
}

// errorType is the error.type of a failed take: the name of the error
// the pool documents it failing with, or else the error's type, as the
// semantic conventions ask.
func errorType(err error) attribute.KeyValue {
	for _, e := range takeErrors {
		if errors.Is(err, e.err) {
			return semconv.ErrorTypeKey.String(e.name)
		}
	}
	return semconv.ErrorType(err)
}

var takeErrors = []struct {
	err  error
	name string
}{
	{context.DeadlineExceeded, "context.DeadlineExceeded"},
	{context.Canceled, "context.Canceled"},
	{pgpool.ErrClosedPool, "pgpool.ErrClosedPool"},
	{actorpool.ErrPoolExhausted, "actorpool.ErrPoolExhausted"},
}

// TraceRelease calls the inner tracer's. It makes no span: it is given no
// context to make one in.
func (t *Tracer) TraceRelease(pool *pgpool.Pool, data pgpool.TraceReleaseData) {
	if t.release != nil {
		t.release.TraceRelease(pool, data)
	}
}

// TraceQueryStart calls the inner tracer's.
func (t *Tracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if t.query == nil {
		return ctx
	}
	return t.query.TraceQueryStart(ctx, conn, data)
}

// TraceQueryEnd calls the inner tracer's.
func (t *Tracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	if t.query != nil {
		t.query.TraceQueryEnd(ctx, conn, data)
	}
}

// TraceBatchStart calls the inner tracer's.
func (t *Tracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if t.batch == nil {
		return ctx
	}
	return t.batch.TraceBatchStart(ctx, conn, data)
}

// TraceBatchQuery calls the inner tracer's.
func (t *Tracer) TraceBatchQuery(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	if t.batch != nil {
		t.batch.TraceBatchQuery(ctx, conn, data)
	}
}

// TraceBatchEnd calls the inner tracer's.
func (t *Tracer) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchEndData) {
	if t.batch != nil {
		t.batch.TraceBatchEnd(ctx, conn, data)
	}
}

// TraceCopyFromStart calls the inner tracer's.
func (t *Tracer) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromStartData) context.Context {
	if t.copyFrom == nil {
		return ctx
	}
	return t.copyFrom.TraceCopyFromStart(ctx, conn, data)
}

// TraceCopyFromEnd calls the inner tracer's.
func (t *Tracer) TraceCopyFromEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromEndData) {
	if t.copyFrom != nil {
		t.copyFrom.TraceCopyFromEnd(ctx, conn, data)
	}
}

// TracePrepareStart calls the inner tracer's.
func (t *Tracer) TracePrepareStart(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	if t.prepare == nil {
		return ctx
	}
	return t.prepare.TracePrepareStart(ctx, conn, data)
}

// TracePrepareEnd calls the inner tracer's.
func (t *Tracer) TracePrepareEnd(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareEndData) {
	if t.prepare != nil {
		t.prepare.TracePrepareEnd(ctx, conn, data)
	}
}

// TraceConnectStart calls the inner tracer's.
func (t *Tracer) TraceConnectStart(ctx context.Context, data pgx.TraceConnectStartData) context.Context {
	if t.connect == nil {
		return ctx
	}
	return t.connect.TraceConnectStart(ctx, data)
}

// TraceConnectEnd calls the inner tracer's.
func (t *Tracer) TraceConnectEnd(ctx context.Context, data pgx.TraceConnectEndData) {
	if t.connect != nil {
		t.connect.TraceConnectEnd(ctx, data)
	}
}
