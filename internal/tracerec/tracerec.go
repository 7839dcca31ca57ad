// Package tracerec is a tasktrace.TracerOf for the tests of the durable
// actors: a Recorder keeps what an actor tells it, so that a test checks
// the sends and attempts a backend reports, and the headers it carries
// from one to the other.
package tracerec

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor/tasktrace"
	"github.com/actorpool/actorpool/internal/errs"
)

// A Recorder is a tasktrace.TracerOf[R] whose sends return its headers,
// and whose attempts put the headers they got into the handler's
// context (see Header) and are kept once they end.
type Recorder[R any] struct {
	headers map[string]string

	mu    sync.Mutex
	sends []Send
	ended chan Attempt[R]
}

// A Send is a send the Recorder saw end.
type Send struct {
	Info tasktrace.SendInfo
	IDs  []uint64
	Err  error
}

// An Attempt is an attempt the Recorder saw end.
type Attempt[R any] struct {
	Info    tasktrace.AttemptInfo
	Headers map[string]string
	Result  R
}

// New returns a Recorder whose sends return a copy of headers.
func New[R any](headers map[string]string) *Recorder[R] {
	return &Recorder[R]{headers: headers, ended: make(chan Attempt[R], 100)}
}

type headersKey struct{}

// Header returns the header called name that the Recorder's attempt whose
// context ctx is, or derives from, received.
func Header(ctx context.Context, name string) string {
	h, _ := ctx.Value(headersKey{}).(map[string]string)
	return h[name]
}

// StartSend returns a copy of the Recorder's headers, and keeps the send
// once it ends.
func (r *Recorder[R]) StartSend(ctx context.Context, info tasktrace.SendInfo) (context.Context, map[string]string, func([]uint64, error)) {
	return ctx, maps.Clone(r.headers), func(ids []uint64, err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.sends = append(r.sends, Send{info, ids, err})
	}
}

// StartAttempt puts headers into the handler's context, and keeps the
// attempt once it ends; it panics when an attempt ends twice.
func (r *Recorder[R]) StartAttempt(ctx context.Context, info tasktrace.AttemptInfo, headers map[string]string) (context.Context, func(R)) {
	var ended atomic.Bool
	return context.WithValue(ctx, headersKey{}, headers), func(res R) {
		if !ended.CompareAndSwap(false, true) {
			panic("tracerec: an attempt's end was called twice")
		}
		r.ended <- Attempt[R]{info, headers, res}
	}
}

// Sends returns the sends that ended, in order.
func (r *Recorder[R]) Sends() []Send {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sends)
}

// Next returns the next attempt to end, failing t when none does within
// twenty seconds.
func (r *Recorder[R]) Next(t testing.TB) Attempt[R] {
	t.Helper()
	select {
	case a := <-r.ended:
		return a
	case <-time.After(20 * time.Second):
		t.Fatal("no attempt ended")
		return Attempt[R]{}
	}
}

// NoMore fails t if an attempt ended that Next has not returned.
func (r *Recorder[R]) NoMore(t testing.TB) {
	t.Helper()
	select {
	case a := <-r.ended:
		t.Errorf("an attempt more ended: %+v", a)
	default:
	}
}

// The callbacks of a Tracer that a Panicking one can panic in.
const (
	AtStartSend    = "StartSend"
	AtSendEnd      = "send end"
	AtStartAttempt = "StartAttempt"
	AtAttemptEnd   = "attempt end"
)

// PanicValue is what a Panicking tracer panics with.
const PanicValue = "tracerec: the tracer's bug"

// IsPanic reports whether err is, or wraps, the *errs.PanicError (that is,
// *actor.PanicError) of a Panicking tracer's panic in fn, such as
// "Tracer.StartSend": the error of a send, or of an attempt, whose
// tracer panicked.
func IsPanic(err error, fn string) bool {
	var pe *errs.PanicError
	return errors.As(err, &pe) && pe.Func == fn && pe.Value == PanicValue
}

// Panicked returns the message of the error of a Panicking tracer's panic
// in fn, which an actor logs when the panic fails nothing, and which a
// dead letter's error carries when it fails the task.
func Panicked(fn string) string {
	return (&errs.PanicError{Func: fn, Value: PanicValue}).Error()
}

// A Panicking is a Recorder that panics with PanicValue in the callback
// At names: before it starts a send or an attempt, or after it has kept
// one that ended. Its attempt callbacks panic only for attempts up to
// Until, when it is not 0.
type Panicking[R any] struct {
	*Recorder[R]
	At    string
	Until int
}

// StartSend panics at AtStartSend; its end, at AtSendEnd.
func (p *Panicking[R]) StartSend(ctx context.Context, info tasktrace.SendInfo) (context.Context, map[string]string, func([]uint64, error)) {
	if p.At == AtStartSend {
		panic(PanicValue)
	}
	ctx, headers, end := p.Recorder.StartSend(ctx, info)
	return ctx, headers, func(ids []uint64, err error) {
		end(ids, err)
		if p.At == AtSendEnd {
			panic(PanicValue)
		}
	}
}

// StartAttempt panics at AtStartAttempt; its end, at AtAttemptEnd.
func (p *Panicking[R]) StartAttempt(ctx context.Context, info tasktrace.AttemptInfo, headers map[string]string) (context.Context, func(R)) {
	panics := p.Until == 0 || info.Attempt <= p.Until
	if panics && p.At == AtStartAttempt {
		panic(PanicValue)
	}
	ctx, end := p.Recorder.StartAttempt(ctx, info, headers)
	return ctx, func(res R) {
		end(res)
		if panics && p.At == AtAttemptEnd {
			panic(PanicValue)
		}
	}
}
