package actor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"github.com/actorpool/actorpool/internal/names"
)

// A DeadLetter is a task the actor accepted but did not complete, with why.
type DeadLetter[T any] struct {
	Actor  string  // the actor's name
	Task   Task[T] // the task as it was last queued or run
	Reason Reason
	// Err is the error of the task's last attempt, nil if it never ran, or
	// ErrAbandoned if its handler was still running when the actor stopped
	// waiting for it.
	Err error
	// Attempts is how many times the handler ran for the task.
	Attempts int
	Time     time.Time // when the task was dead-lettered
}

// A Sink receives dead letters. The actor calls Put from its workers, from
// Close and Stop, and from senders whose send dropped a task, so Put must be
// safe for concurrent use; and it should not block, since Close waits for
// the letters being put. An error from Put is logged with the letter, so that the
// letter is not lost without a trace.
type Sink[T any] interface {
	Put(letter DeadLetter[T]) error
}

// A Source is a store of dead letters that can be read back, for
// [Actor.Replay]; RingSink and FileSink are both, and FileSink is a
// [Mover] too.
type Source[T any] interface {
	// Letters yields the letters in the order they were put, each with nil;
	// a letter it cannot read as a zero letter and a *LineError, after
	// which it goes on; and, last, a zero letter and the error that
	// stopped the reading, if one did.
	Letters() iter.Seq2[DeadLetter[T], error]
}

// Reason is why a task went to the dead letters.
type Reason uint8

const (
	// ReasonClosed: Stop ended the actor before the task completed.
	ReasonClosed Reason = iota + 1
	// ReasonDrainDeadline: Close's context ended before the task completed.
	ReasonDrainDeadline
	// ReasonRejected: a send refused the task and Config.DeadLetterRejected
	// is set.
	ReasonRejected
	// ReasonDropped: the overflow policy dropped the task.
	ReasonDropped
	// ReasonMaxAttempts: the task failed Config.MaxAttempts times.
	ReasonMaxAttempts
	// ReasonPermanent: the task failed with an error marked Permanent.
	ReasonPermanent
)

// reasonNames are the reasons' names, in the order of their codes.
var reasonNames = names.New[Reason]("actor", "dead-letter reason", "Reason",
	"closed", "drain deadline", "rejected", "dropped", "max attempts", "permanent error")

// String returns the reason's name, such as "max attempts".
func (r Reason) String() string { return reasonNames.String(r) }

// MarshalText encodes r as its name, so that letters stored as JSON read well.
func (r Reason) MarshalText() ([]byte, error) { return reasonNames.Marshal(r) }

// UnmarshalText decodes a name written by MarshalText.
func (r *Reason) UnmarshalText(text []byte) (err error) {
	*r, err = reasonNames.Unmarshal(text)
	return err
}

// attrs returns the letter as log attributes, with room for n more.
func (l DeadLetter[T]) attrs(n int) []slog.Attr {
	attrs := append(make([]slog.Attr, 0, 8+n),
		slog.String("actor", l.Actor),
		slog.String("reason", l.Reason.String()),
		slog.Uint64("task_id", l.Task.ID),
		slog.String("task_type", l.Task.Type),
		slog.Int("attempts", l.Attempts),
		slog.Time("enqueued", l.Task.Enqueued),
		slog.Any("payload", l.Task.Payload),
	)
	if l.Err != nil {
		attrs = append(attrs, slog.Any("error", l.Err))
	}
	return attrs
}

// jsonLetter is a DeadLetter's stored form: an error keeps only its message.
type jsonLetter[T any] struct {
	Actor    string    `json:"actor"`
	Reason   Reason    `json:"reason"`
	Error    string    `json:"error,omitempty"`
	Attempts int       `json:"attempts"`
	Time     time.Time `json:"time"`
	Task     Task[T]   `json:"task"`
}

// MarshalJSON encodes the letter with its error as a message.
func (l DeadLetter[T]) MarshalJSON() ([]byte, error) {
	j := jsonLetter[T]{Actor: l.Actor, Reason: l.Reason, Attempts: l.Attempts, Time: l.Time, Task: l.Task}
	if l.Err != nil {
		j.Error = l.Err.Error()
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes what MarshalJSON wrote. The error comes back with its
// message only: errors.Is and errors.As no longer see what it wrapped. An
// object without the reason and the task that MarshalJSON always writes,
// such as {} or null, is not a letter: it fails, rather than decoding as
// a task of a zero payload that a replay would run.
func (l *DeadLetter[T]) UnmarshalJSON(data []byte) error {
	var j struct {
		jsonLetter[T]
		Task *Task[T] `json:"task"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	switch {
	case j.Reason == 0:
		return errors.New(`actor: not a dead letter: it has no "reason"`)
	case j.Task == nil:
		return errors.New(`actor: not a dead letter: it has no "task"`)
	}
	*l = DeadLetter[T]{Actor: j.Actor, Reason: j.Reason, Attempts: j.Attempts, Time: j.Time, Task: *j.Task}
	if j.Error != "" {
		l.Err = errors.New(j.Error)
	}
	return nil
}

// Dead-lettering a task the actor accepted takes two steps: under the
// mutex, in the same instant as the task leaves the gauge it counted in,
// countLettersLocked counts it as dead-lettered and as a letter being put;
// after the mutex is released, deadLetter hands it to the sink, answers its
// Ask, and marks the letter put. Close waits for the letters being put, so
// that a sink can be closed once it returns.

// countLettersLocked counts n tasks as dead-lettered and as letters being
// put; each must then be handed over with deadLetter.
func (a *Actor[T]) countLettersLocked(n int) {
	a.c.deadLettered += uint64(n)
	a.letters.Add(n)
}

// deadLetter hands env's task, counted by countLettersLocked, to the sink,
// with reason, the error of its last attempt and the number of times the
// handler ran for it; answers Ask with askError; and marks the letter put.
// failure is the task's last *TaskError when it failed for good, else nil.
func (a *Actor[T]) deadLetter(env *envelope[T], reason Reason, err error, attempts int, failure error) {
	// Deferred, so that a sink that ends the goroutine with runtime.Goexit
	// leaves neither an Ask nor Close waiting.
	defer a.letters.Done()
	if reply := env.reply(); reply != nil {
		defer func() { reply <- a.askError(env, reason, failure) }()
	}
	a.put(DeadLetter[T]{Actor: a.name, Task: a.task(env), Reason: reason, Err: err, Attempts: attempts, Time: time.Now()})
}

// askError is what Ask returns for a task dead-lettered for reason: an
// error matching ErrClosed when the actor shut down before the task
// completed, ErrDropped when the overflow policy dropped it, else failure.
func (a *Actor[T]) askError(env *envelope[T], reason Reason, failure error) error {
	switch reason {
	case ReasonClosed, ReasonDrainDeadline:
		return fmt.Errorf("actor %q: task %d (%s) dead-lettered (%s): %w", a.name, env.id, a.typeOf(env), reason, ErrClosed)
	case ReasonDropped:
		return fmt.Errorf("actor %q: task %d (%s): %w", a.name, env.id, a.typeOf(env), ErrDropped)
	}
	return failure
}

// put hands l to the sink; a sink that fails or panics has the letter logged
// instead, so that it is not lost without a trace.
func (a *Actor[T]) put(l DeadLetter[T]) {
	err := protect("Sink.Put", func() error { return a.sink.Put(l) })
	if err == nil {
		return
	}
	attrs := append(l.attrs(1), slog.Any("sink_error", err))
	a.log.LogAttrs(context.Background(), slog.LevelError, "actor: dead-letter sink failed; the letter is kept in this log only", attrs...)
}
