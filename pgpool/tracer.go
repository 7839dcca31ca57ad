package pgpool

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// AcquireTracer traces takes from a pool. When the Tracer of a Config's
// ConnConfig implements it, the pool calls TraceAcquireStart when a take
// begins and TraceAcquireEnd when it ends, with the context
// TraceAcquireStart returned. Its methods are pgxpool's, with this
// package's Pool; package pgpool/otelpgpool has one for OpenTelemetry.
type AcquireTracer interface {
	// TraceAcquireStart is called at the beginning of Acquire and of the
	// pool's one-call methods. The returned context is used for the rest
	// of the take and passed to TraceAcquireEnd.
	TraceAcquireStart(ctx context.Context, pool *Pool, data TraceAcquireStartData) context.Context
	// TraceAcquireEnd is called when the take ends.
	TraceAcquireEnd(ctx context.Context, pool *Pool, data TraceAcquireEndData)
}

// TraceAcquireStartData is what TraceAcquireStart is told: nothing yet.
type TraceAcquireStartData struct{}

// TraceAcquireEndData is what TraceAcquireEnd is told: the connection
// taken, or the error that ended the take.
type TraceAcquireEndData struct {
	Conn *pgx.Conn
	Err  error
}

// ReleaseTracer traces give-backs to a pool. When the Tracer of a Config's
// ConnConfig implements it, the pool calls TraceRelease as each connection
// is given back.
type ReleaseTracer interface {
	TraceRelease(pool *Pool, data TraceReleaseData)
}

// TraceReleaseData is what TraceRelease is told: the connection given
// back.
type TraceReleaseData struct {
	Conn *pgx.Conn
}
