package actor

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Replay sends the letters of src to the actor again, in order, as new tasks
// with their payload and type, and returns how many it replayed. A line of
// src that holds no letter (a [*LineError]) is skipped and stays in src;
// Replay goes on past it.
//
// From a [Mover] such as FileSink, Replay moves the letters: it sends one,
// waits for its task to end, and has src take the letter out before it
// sends the next, so that a replay that stops halfway — an error, ctx
// ending, a crash — can be run again and sends only what is left. A task
// that ends in the dead letters again (it failed for good, or the actor
// shut down) is a new letter of the actor's sink: point Config.DeadLetters
// at src to keep it there. Replay stops, leaving the letter in src, when
// the actor refuses the task (it is closed, or ctx ends while Replay waits
// for room in the mailbox), and when ctx ends while the task runs: the task
// goes on, and its letter, still in src, is sent again by the next replay.
// That letter, and after a crash the one whose task ended last, are the
// only ones a replay can send twice.
//
// From another Source, such as RingSink, Replay copies the letters: it
// sends them as Send does, waiting for room, and stops at the first the
// actor refuses; src keeps them all, so clear it once the replay has
// succeeded.
//
// The error is nil when every letter was replayed, and else a
// [*ReplayError] that says which lines hold no letter and what stopped the
// replay.
func (a *Actor[T]) Replay(ctx context.Context, src Source[T]) (int, error) {
	r := &ReplayError{Actor: a.name}
	if m, ok := src.(Mover[T]); ok {
		r.Err = m.Move(func(l DeadLetter[T], err error) (bool, error) {
			if r.unreadable(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			taken, err := a.redeliver(ctx, l)
			if taken {
				r.Replayed++
			}
			return taken, err
		})
	} else {
		for l, err := range src.Letters() {
			if r.unreadable(err) {
				continue
			}
			if err == nil {
				err = a.Send(ctx, l.Task.Payload, WithType(l.Task.Type))
				if err != nil {
					err = fmt.Errorf("letter of task %d (%s) from %q: %w", l.Task.ID, l.Task.Type, l.Actor, err)
				}
			}
			if err != nil {
				r.Err = err
				break
			}
			r.Replayed++
		}
	}
	if r.Err == nil && len(r.Unreadable) == 0 {
		return r.Replayed, nil
	}
	return r.Replayed, r
}

// redeliver sends l's payload as Ask does and waits for its task to end.
// taken reports whether the actor has ended the task — completed, or
// dead-lettered — so that the letter may leave its source; err, whether
// the replay must stop.
func (a *Actor[T]) redeliver(ctx context.Context, l DeadLetter[T]) (taken bool, err error) {
	reply := make(chan error, 1)
	env := envelope[T]{enq: a.clock.now(), payload: l.Task.Payload, x: &extras{typ: l.Task.Type, reply: reply}}
	if err := a.send(ctx, &env, true); err != nil {
		// Refused. With DeadLetterRejected the refusal is a letter of the
		// actor's sink already: leaving this one too would make two.
		return a.set.deadLetterRejected, fmt.Errorf("letter of task %d (%s) from %q: refused: %w", l.Task.ID, l.Task.Type, l.Actor, err)
	}
	select {
	case err := <-reply:
		// Completed, or failed for good, dropped or cut short by a
		// shutdown, and so dead-lettered again: the actor is done with it.
		if errors.Is(err, ErrClosed) {
			return true, fmt.Errorf("letter of task %d (%s) from %q: %w", l.Task.ID, l.Task.Type, l.Actor, err)
		}
		return true, nil
	case <-ctx.Done():
		return false, fmt.Errorf("letter of task %d (%s) from %q: stopped waiting for its task %d, which goes on; the letter stays and the next replay sends it again: %w",
			l.Task.ID, l.Task.Type, l.Actor, env.id, ctx.Err())
	}
}

// A ReplayError is what a replay left behind: the lines of its source that
// hold no letter, which stay there, and what stopped it before the end, if
// anything did. What the replay did not send stays in a Mover.
type ReplayError struct {
	Actor      string       // the actor replayed into
	Replayed   int          // how many letters were replayed
	Unreadable []*LineError // the lines that hold no letter, in order
	Err        error        // what stopped the replay, or nil if it went to the end
}

// unreadable records err if it is a line that holds no letter.
func (r *ReplayError) unreadable(err error) bool {
	var le *LineError
	if errors.As(err, &le) {
		r.Unreadable = append(r.Unreadable, le)
		return true
	}
	return false
}

// maxListed is how many unreadable lines a ReplayError's message names.
const maxListed = 3

// Error says how many letters were replayed, then what stopped the replay
// and which lines hold no letter, the first few of them by number.
func (r *ReplayError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "replay into %q: %d replayed", r.Actor, r.Replayed)
	if r.Err != nil {
		fmt.Fprintf(&b, ", then stopped: %v", r.Err)
	}
	if n := len(r.Unreadable); n > 0 {
		if n == 1 {
			b.WriteString("; 1 line holds no letter and stays in the source, to mend or remove by hand")
		} else {
			fmt.Fprintf(&b, "; %d lines hold no letter and stay in the source, to mend or remove by hand", n)
		}
		for i, le := range r.Unreadable[:min(n, maxListed)] {
			sep := ", "
			if i == 0 {
				sep = ": "
			}
			fmt.Fprintf(&b, "%s%s:%d (%v)", sep, le.Path, le.Line, le.Err)
		}
		if n > maxListed {
			fmt.Fprintf(&b, " and %d more", n-maxListed)
		}
	}
	return b.String()
}

// Unwrap returns what stopped the replay and the unreadable lines.
func (r *ReplayError) Unwrap() []error {
	errs := make([]error, 0, 1+len(r.Unreadable))
	if r.Err != nil {
		errs = append(errs, r.Err)
	}
	for _, le := range r.Unreadable {
		errs = append(errs, le)
	}
	return errs
}
