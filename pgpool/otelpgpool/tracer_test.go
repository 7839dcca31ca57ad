package otelpgpool_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgpool"
	"github.com/actorpool/actorpool/pgpool/otelpgpool"
)

// newRecorder returns a tracer provider that samples every span and the
// recorder it reports them to.
func newRecorder(t testing.TB) (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp, rec
}

// acquireSpans returns the ended acquire spans.
func acquireSpans(rec *tracetest.SpanRecorder) []sdktrace.ReadOnlySpan {
	var spans []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == otelpgpool.AcquireSpanName {
			spans = append(spans, s)
		}
	}
	return spans
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// checkAcquireSpan fails t unless s is a successful take's span, a child
// of parent, that names the test pool.
func checkAcquireSpan(t testing.TB, s sdktrace.ReadOnlySpan, parent trace.SpanContext) {
	t.Helper()
	if s.Parent().SpanID() != parent.SpanID() || s.SpanContext().TraceID() != parent.TraceID() {
		t.Errorf("acquire span's parent = %v in trace %v; want the caller's span %v in trace %v",
			s.Parent().SpanID(), s.SpanContext().TraceID(), parent.SpanID(), parent.TraceID())
	}
	if s.SpanKind() != trace.SpanKindInternal {
		t.Errorf("acquire span's kind = %v, want internal", s.SpanKind())
	}
	if s.Status().Code != codes.Unset || len(s.Events()) != 0 {
		t.Errorf("successful take's span has status %v and events %v; want neither", s.Status(), s.Events())
	}
	for key, want := range map[attribute.Key]string{
		"db.system.name":                 "postgresql",
		"db.client.connection.pool.name": testPoolName,
	} {
		if v, ok := attr(s, key); !ok || v.AsString() != want {
			t.Errorf("acquire span's %s = %q, want %q", key, v.Emit(), want)
		}
	}
	for _, key := range []attribute.Key{"server.address", "server.port", "db.namespace"} {
		if _, ok := attr(s, key); !ok {
			t.Errorf("acquire span has no %s", key)
		}
	}
}

// TestAcquireSpans checks that every way of taking a connection makes one
// acquire span, a child of the caller's span, that ends before the
// caller's does.
func TestAcquireSpans(t *testing.T) {
	testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	tp, rec := newRecorder(t)
	p := newPool(t, otelpgpool.NewTracer(nil, otelpgpool.WithTracerProvider(tp)), nil)
	caller := tp.Tracer("test")

	tests := []struct {
		name string
		take func(ctx context.Context) error
	}{
		{"Exec", func(ctx context.Context) error { _, err := p.Exec(ctx, "SELECT 1"); return err }},
		{"Query", func(ctx context.Context) error {
			rows, _ := p.Query(ctx, "SELECT 1")
			rows.Close()
			return rows.Err()
		}},
		{"QueryRow", func(ctx context.Context) error { var n int; return p.QueryRow(ctx, "SELECT 1").Scan(&n) }},
		{"SendBatch", func(ctx context.Context) error {
			b := &pgx.Batch{}
			b.Queue("SELECT 1")
			return p.SendBatch(ctx, b).Close()
		}},
		{"Begin", func(ctx context.Context) error {
			tx, err := p.Begin(ctx)
			if err != nil {
				return err
			}
			return tx.Rollback(ctx)
		}},
		{"Acquire", func(ctx context.Context) error {
			c, err := p.Acquire(ctx)
			if err != nil {
				return err
			}
			c.Release()
			return nil
		}},
		{"AcquireFunc", func(ctx context.Context) error {
			return p.AcquireFunc(ctx, func(*pgpool.Conn) error { return nil })
		}},
		{"With", func(ctx context.Context) error {
			return p.With(ctx, func(context.Context, *pgpool.Conn) error { return nil })
		}},
		{"Ping", p.Ping},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec.Reset()
			ctx, parent := caller.Start(context.Background(), "request")
			err := tt.take(ctx)
			parent.End()
			if err != nil {
				t.Fatal(err)
			}
			spans := acquireSpans(rec)
			if len(spans) != 1 {
				t.Fatalf("%s made %d acquire spans, want 1", tt.name, len(spans))
			}
			checkAcquireSpan(t, spans[0], parent.SpanContext())
			if end := parent.(sdktrace.ReadOnlySpan).EndTime(); spans[0].EndTime().After(end) {
				t.Errorf("acquire span ended at %v, after its caller's span (%v)", spans[0].EndTime(), end)
			}
		})
	}
}

// TestAcquireSpanErrors checks that a take that fails records its error on
// its span, sets the span's status to Error and names the error's kind in
// error.type.
func TestAcquireSpanErrors(t *testing.T) {
	testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	tp, rec := newRecorder(t)
	tracer := otelpgpool.NewTracer(nil, otelpgpool.WithTracerProvider(tp))
	caller := tp.Tracer("test")

	tests := []struct {
		name     string
		take     func(ctx context.Context, p *pgpool.Pool) error
		wantErr  error
		wantType string
	}{
		{"canceled", func(ctx context.Context, p *pgpool.Pool) error {
			ctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { _, err := p.Exec(ctx, "SELECT 1"); done <- err }()
			waitForWaiters(t, p, 1)
			cancel()
			return <-done
		}, context.Canceled, "context.Canceled"},
		{"timed out", func(ctx context.Context, p *pgpool.Pool) error {
			// The one connection is held: however the timer runs,
			// the take ends by its deadline.
			ctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
			defer cancel()
			_, err := p.Exec(ctx, "SELECT 1")
			return err
		}, context.DeadlineExceeded, "context.DeadlineExceeded"},
		{"closed", func(ctx context.Context, p *pgpool.Pool) error {
			closed, cancel := context.WithCancel(context.Background())
			cancel() // close without waiting for the held connection, closed when given back
			p.Shutdown(closed)
			_, err := p.Exec(ctx, "SELECT 1")
			return err
		}, pgpool.ErrClosedPool, "pgpool.ErrClosedPool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPool(t, tracer, func(c *pgpool.Config) { c.MaxConns = 1 })
			held, err := p.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer held.Release()
			rec.Reset()
			ctx, parent := caller.Start(context.Background(), "request")
			err = tt.take(ctx, p)
			parent.End()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("take failed with %v, want %v", err, tt.wantErr)
			}
			spans := acquireSpans(rec)
			if len(spans) != 1 {
				t.Fatalf("the take made %d acquire spans, want 1", len(spans))
			}
			s := spans[0]
			if s.Parent().SpanID() != parent.SpanContext().SpanID() {
				t.Errorf("failed take's span has parent %v, want the caller's %v", s.Parent().SpanID(), parent.SpanContext().SpanID())
			}
			if s.Status().Code != codes.Error || s.Status().Description != err.Error() {
				t.Errorf("failed take's span status = %+v, want Error with %q", s.Status(), err.Error())
			}
			if ev := s.Events(); len(ev) != 1 || ev[0].Name != "exception" {
				t.Errorf("failed take's span events = %v, want the error recorded as one exception", ev)
			}
			if v, _ := attr(s, "error.type"); v.AsString() != tt.wantType {
				t.Errorf("failed take's error.type = %q, want %q", v.Emit(), tt.wantType)
			}
		})
	}
}

// TestAcquireSpanNeedsRecordingParent checks that a take outside any
// recording span starts no span, so that work outside traces leaves no
// root spans.
func TestAcquireSpanNeedsRecordingParent(t *testing.T) {
	testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	tp, rec := newRecorder(t)
	p := newPool(t, otelpgpool.NewTracer(nil, otelpgpool.WithTracerProvider(tp)), nil)
	sampledOut := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1},
	}))
	for name, ctx := range map[string]context.Context{"no span": context.Background(), "span not sampled": sampledOut} {
		if _, err := p.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		if n := len(rec.Started()); n != 0 {
			t.Errorf("%s: a take started %d spans, want none", name, n)
		}
	}
}

// TestAcquireSpanNestedTake checks that a take made by another take's
// hook, under a span that is not recording, leaves the outer take's span
// for the outer take to end.
func TestAcquireSpanNestedTake(t *testing.T) {
	testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	tp, rec := newRecorder(t)
	tracer := otelpgpool.NewTracer(nil, otelpgpool.WithTracerProvider(tp))
	other := newPool(t, tracer, nil)
	var endedInHook atomic.Int32
	p := newPool(t, tracer, func(c *pgpool.Config) {
		c.PrepareConn = func(ctx context.Context, _ *pgx.Conn) (bool, error) {
			unsampled := trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: trace.TraceID{2}, SpanID: trace.SpanID{2},
			}))
			_, err := other.Exec(unsampled, "SELECT 1")
			endedInHook.Store(int32(len(acquireSpans(rec))))
			return err == nil, err
		}
	})
	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	_, err := p.Exec(ctx, "SELECT 1")
	parent.End()
	if err != nil {
		t.Fatal(err)
	}
	if n := endedInHook.Load(); n != 0 {
		t.Errorf("the nested take ended %d acquire spans; the outer take's must stay open until it ends", n)
	}
	spans := acquireSpans(rec)
	if len(spans) != 1 {
		t.Fatalf("%d acquire spans, want the outer take's alone", len(spans))
	}
	checkAcquireSpan(t, spans[0], parent.SpanContext())
}

// innerTracer counts the calls of every tracer interface a Tracer passes
// on, and checks that each end gets the context its start returned.
type innerTracer struct {
	mu    sync.Mutex
	calls map[string]int
	errs  []string
	// acquireParent is the span active in the last TraceAcquireStart.
	acquireParent trace.SpanContext
}

type innerKey struct{}

func (f *innerTracer) start(ctx context.Context, method string) context.Context {
	f.count(method)
	return context.WithValue(ctx, innerKey{}, method)
}

func (f *innerTracer) end(ctx context.Context, method, startMethod string) {
	f.count(method)
	if got, _ := ctx.Value(innerKey{}).(string); got != startMethod {
		f.mu.Lock()
		f.errs = append(f.errs, method+" got the context of "+got+", want "+startMethod+"'s")
		f.mu.Unlock()
	}
}

func (f *innerTracer) count(method string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[method]++
}

func (f *innerTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return f.start(ctx, "QueryStart")
}
func (f *innerTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	f.end(ctx, "QueryEnd", "QueryStart")
}
func (f *innerTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return f.start(ctx, "BatchStart")
}
func (f *innerTracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchQueryData) {
	f.end(ctx, "BatchQuery", "BatchStart")
}
func (f *innerTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	f.end(ctx, "BatchEnd", "BatchStart")
}
func (f *innerTracer) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	return f.start(ctx, "CopyFromStart")
}
func (f *innerTracer) TraceCopyFromEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromEndData) {
	f.end(ctx, "CopyFromEnd", "CopyFromStart")
}
func (f *innerTracer) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	return f.start(ctx, "PrepareStart")
}
func (f *innerTracer) TracePrepareEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareEndData) {
	f.end(ctx, "PrepareEnd", "PrepareStart")
}
func (f *innerTracer) TraceConnectStart(ctx context.Context, _ pgx.TraceConnectStartData) context.Context {
	return f.start(ctx, "ConnectStart")
}
func (f *innerTracer) TraceConnectEnd(ctx context.Context, _ pgx.TraceConnectEndData) {
	f.end(ctx, "ConnectEnd", "ConnectStart")
}
func (f *innerTracer) TraceAcquireStart(ctx context.Context, _ *pgpool.Pool, _ pgpool.TraceAcquireStartData) context.Context {
	f.mu.Lock()
	f.acquireParent = trace.SpanContextFromContext(ctx)
	f.mu.Unlock()
	return f.start(ctx, "AcquireStart")
}
func (f *innerTracer) TraceAcquireEnd(ctx context.Context, _ *pgpool.Pool, _ pgpool.TraceAcquireEndData) {
	f.end(ctx, "AcquireEnd", "AcquireStart")
}
func (f *innerTracer) TraceRelease(_ *pgpool.Pool, _ pgpool.TraceReleaseData) { f.count("Release") }

// queryOnlyTracer is an inner tracer of pgx's one required interface.
type queryOnlyTracer struct{ f *innerTracer }

func (q queryOnlyTracer) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return q.f.TraceQueryStart(ctx, c, d)
}
func (q queryOnlyTracer) TraceQueryEnd(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryEndData) {
	q.f.TraceQueryEnd(ctx, c, d)
}

// TestTracerForwards checks that the Tracer passes every tracer call on to
// an inner tracer that implements its interface, each end with the
// context its start returned, and that the inner acquire tracer runs
// inside the take's span.
func TestTracerForwards(t *testing.T) {
	testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	tp, rec := newRecorder(t)
	// The calls the statements below make: one connect, three takes
	// and give-backs, two queries, a batch of two, a prepare, and a copy,
	// which prepares too, to learn its columns' types.
	all := map[string]int{
		"ConnectStart": 1, "ConnectEnd": 1,
		"AcquireStart": 3, "AcquireEnd": 3, "Release": 3,
		"QueryStart": 2, "QueryEnd": 2,
		"BatchStart": 1, "BatchQuery": 2, "BatchEnd": 1,
		"PrepareStart": 2, "PrepareEnd": 2,
		"CopyFromStart": 1, "CopyFromEnd": 1,
	}
	tests := []struct {
		name  string
		inner func() (pgx.QueryTracer, *innerTracer)
		want  map[string]int
	}{
		{"every interface", func() (pgx.QueryTracer, *innerTracer) { f := &innerTracer{}; return f, f }, all},
		{"queries alone", func() (pgx.QueryTracer, *innerTracer) { f := &innerTracer{}; return queryOnlyTracer{f}, f },
			map[string]int{"QueryStart": 2, "QueryEnd": 2}},
		{"none", func() (pgx.QueryTracer, *innerTracer) { return nil, &innerTracer{} }, map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner, counts := tt.inner()
			p := newPool(t, otelpgpool.NewTracer(inner, otelpgpool.WithTracerProvider(tp)), func(c *pgpool.Config) { c.MaxConns = 1 })
			rec.Reset()
			ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
			if _, err := p.Exec(ctx, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
			b := &pgx.Batch{}
			b.Queue("SELECT 1")
			b.Queue("SELECT 2")
			if err := p.SendBatch(ctx, b).Close(); err != nil {
				t.Fatal(err)
			}
			err := p.AcquireFunc(ctx, func(c *pgpool.Conn) error {
				if _, err := c.Conn().Prepare(ctx, "one", "SELECT 1"); err != nil {
					return err
				}
				if _, err := c.Exec(ctx, "CREATE TEMPORARY TABLE otelpgpool_copy (n int)"); err != nil {
					return err
				}
				_, err := c.CopyFrom(ctx, pgx.Identifier{"otelpgpool_copy"}, []string{"n"}, pgx.CopyFromRows([][]any{{1}}))
				return err
			})
			parent.End()
			if err != nil {
				t.Fatal(err)
			}
			p.Close() // gives back nothing more: every call is counted
			counts.mu.Lock()
			defer counts.mu.Unlock()
			for _, method := range []string{"ConnectStart", "ConnectEnd", "AcquireStart", "AcquireEnd", "Release",
				"QueryStart", "QueryEnd", "BatchStart", "BatchQuery", "BatchEnd",
				"PrepareStart", "PrepareEnd", "CopyFromStart", "CopyFromEnd"} {
				if got, want := counts.calls[method], tt.want[method]; got != want {
					t.Errorf("inner tracer's Trace%s called %d times, want %d", method, got, want)
				}
			}
			for _, e := range counts.errs {
				t.Error(e)
			}
			if spans := acquireSpans(rec); len(spans) != 3 {
				t.Errorf("%d acquire spans, want 3", len(spans))
			} else if tt.want["AcquireStart"] > 0 && !counts.acquireParent.Equal(spans[2].SpanContext()) {
				t.Errorf("inner TraceAcquireStart ran under span %v, want the take's span %v",
					counts.acquireParent.SpanID(), spans[2].SpanContext().SpanID())
			}
		})
	}
}

// TestTracerConcurrent takes and gives back from many goroutines, each
// under its own span, for the race detector, and checks that each take's
// span is its caller's child.
func TestTracerConcurrent(t *testing.T) {
	testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	tp, rec := newRecorder(t)
	p := newPool(t, otelpgpool.NewTracer(&innerTracer{}, otelpgpool.WithTracerProvider(tp)), func(c *pgpool.Config) { c.MaxConns = 2 })
	const workers, takes = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers*takes)
	for range workers {
		wg.Go(func() {
			for range takes {
				ctx, span := tp.Tracer("test").Start(context.Background(), "request")
				_, err := p.Exec(ctx, "SELECT 1")
				span.End()
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	requests := map[trace.SpanID]bool{}
	for _, s := range rec.Ended() {
		if s.Name() == "request" {
			requests[s.SpanContext().SpanID()] = true
		}
	}
	spans := acquireSpans(rec)
	if len(spans) != workers*takes {
		t.Fatalf("%d acquire spans, want %d", len(spans), workers*takes)
	}
	parents := map[trace.SpanID]bool{}
	for _, s := range spans {
		if !requests[s.Parent().SpanID()] || parents[s.Parent().SpanID()] {
			t.Fatalf("acquire span's parent %v is not a request's, or is another take's too", s.Parent().SpanID())
		}
		parents[s.Parent().SpanID()] = true
	}
}

// BenchmarkAcquire measures a take and give-back of an idle connection
// with no tracer, with the Tracer under a span that records nothing, and
// with the Tracer making a span.
func BenchmarkAcquire(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	defer tp.Shutdown(context.Background())
	ctxRecording, span := tp.Tracer("bench").Start(context.Background(), "request")
	defer span.End()
	tracer := otelpgpool.NewTracer(nil, otelpgpool.WithTracerProvider(tp))
	for _, bb := range []struct {
		name   string
		tracer pgx.QueryTracer
		ctx    context.Context
	}{
		{"no tracer", nil, context.Background()},
		{"tracer, no span", tracer, context.Background()},
		{"tracer, span", tracer, ctxRecording},
	} {
		b.Run(bb.name, func(b *testing.B) {
			p := newPool(b, bb.tracer, func(c *pgpool.Config) { c.MaxConns = 1 })
			for b.Loop() {
				c, err := p.Acquire(bb.ctx)
				if err != nil {
					b.Fatal(err)
				}
				c.Release()
			}
		})
	}
}

// TestAcquireSpanHookPanics checks that a take whose PrepareConn panics
// still ends its span, with status Error, and lets the hook's own panic
// go on.
func TestAcquireSpanHookPanics(t *testing.T) {
	testenv.Postgres(t)
	tp, rec := newRecorder(t)
	inner := &innerTracer{}
	var panics atomic.Bool
	p := newPool(t, otelpgpool.NewTracer(inner, otelpgpool.WithTracerProvider(tp)), func(c *pgpool.Config) {
		c.MaxConns = 1
		c.PrepareConn = func(context.Context, *pgx.Conn) (bool, error) {
			if panics.Load() {
				panic("hook broke")
			}
			return true, nil
		}
	})
	if _, err := p.Exec(context.Background(), "SELECT 1"); err != nil { // connect first
		t.Fatal(err)
	}
	panics.Store(true)
	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	v := func() (v any) {
		defer func() { v = recover() }()
		p.Exec(ctx, "SELECT 1")
		return nil
	}()
	parent.End()
	panics.Store(false)
	if v != "hook broke" {
		t.Errorf("the take panicked with %v, want the hook's panic, \"hook broke\"", v)
	}
	spans := acquireSpans(rec)
	if len(spans) != 1 {
		t.Fatalf("%d acquire spans ended, want the panicked take's", len(spans))
	}
	if s := spans[0]; s.Status().Code != codes.Error {
		t.Errorf("the panicked take's span has status %+v, want Error", s.Status())
	}
	inner.mu.Lock()
	if n := inner.calls["AcquireEnd"]; n != 2 {
		t.Errorf("inner TraceAcquireEnd called %d times, want 2: once per take", n)
	}
	inner.mu.Unlock()
	// The panicked take's connection was never given back: the garbage
	// collector finds its lease dropped and the pool closes it.
	testenv.Eventually(t, 10*time.Second, "the dropped connection reclaimed", func() bool {
		runtime.GC()
		return p.Stats().Leaks == 1
	})
}

// TestNilTracerProvider checks that a nil provider leaves the global one,
// as OpenTelemetry's instrumentation libraries treat it, rather than
// panicking.
func TestNilTracerProvider(t *testing.T) {
	tr := otelpgpool.NewTracer(nil, otelpgpool.WithTracerProvider(nil))
	tr.TraceAcquireEnd(tr.TraceAcquireStart(context.Background(), nil, pgpool.TraceAcquireStartData{}), nil, pgpool.TraceAcquireEndData{})
}
