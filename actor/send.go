package actor

import (
	"context"
	"fmt"
	"time"
)

// Send hands payload to the actor. When a bounded mailbox is full it does
// what Config.Overflow says: under OverflowBlock it waits until there is room,
// ctx ends (returning ctx's error) or the actor closes (returning ErrClosed).
// A nil error means the actor accepted the task: it will complete or reach
// the dead letters. After Close or Stop, Send returns ErrClosed.
func (a *Actor[T]) Send(ctx context.Context, payload T, opts ...SendOption) error {
	env := envelope[T]{enq: a.clock.now(), payload: payload, x: a.typed(opts)}
	return a.send(ctx, &env, true)
}

// TrySend is Send that never waits: where Send would wait for room, TrySend
// returns ErrMailboxFull.
func (a *Actor[T]) TrySend(payload T, opts ...SendOption) error {
	env := envelope[T]{enq: a.clock.now(), payload: payload, x: a.typed(opts)}
	return a.send(context.Background(), &env, false)
}

// SendBatch sends payloads in order as Send would, and stops at the first
// error, which it returns with the number of payloads accepted before it. The
// payloads after the error are counted as submitted and rejected.
func (a *Actor[T]) SendBatch(ctx context.Context, payloads []T, opts ...SendOption) (int, error) {
	now, x := a.clock.now(), a.typed(opts)
	for i, p := range payloads {
		env := envelope[T]{enq: now, payload: p, x: x}
		if err := a.send(ctx, &env, true); err != nil {
			a.refuseRest(payloads[i+1:], x, now, err)
			return i, err
		}
	}
	return len(payloads), nil
}

// Ask sends payload as Send does and waits until the task has ended. It
// returns nil when the handler succeeded; the last [*TaskError] when the task
// failed for good; an error matching ErrClosed when the actor shut down
// before the task completed, and ErrDropped when the overflow policy dropped
// it. If ctx ends first, Ask returns ctx's error and the task goes on.
//
// A request that wants a reply can carry where to put it in its payload: the
// handler's writes happen before Ask returns.
func (a *Actor[T]) Ask(ctx context.Context, payload T, opts ...SendOption) error {
	reply := make(chan error, 1)
	env := envelope[T]{enq: a.clock.now(), payload: payload, x: &extras{typ: typeOption(opts), reply: reply}}
	if err := a.send(ctx, &env, true); err != nil {
		return err
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return fmt.Errorf("ask %q: stopped waiting for task %d (%s): %w", a.name, env.id, a.typeOf(&env), ctx.Err())
	}
}

// typed returns the extras of the type named in opts, or nil for the actor's
// default.
func (a *Actor[T]) typed(opts []SendOption) *extras {
	if typ := typeOption(opts); typ != "" {
		return a.types.extras(typ)
	}
	return nil
}

// typeOption returns the type named by the last option that names one, or
// "" for the actor's default.
func typeOption(opts []SendOption) string {
	typ := ""
	for _, o := range opts {
		if o.typ != "" {
			typ = o.typ
		}
	}
	return typ
}

// send offers env to the actor; wait says whether it may wait for room.
func (a *Actor[T]) send(ctx context.Context, env *envelope[T], wait bool) error {
	a.mu.Lock()
	a.c.submitted++
	a.nextID++
	env.id = a.nextID
	if a.closingLocked() {
		a.c.rejected++
		a.mu.Unlock()
		return a.refuse(env, a.errClosed)
	}
	if w := a.handOffLocked(env); w != nil {
		a.mu.Unlock()
		w.wake <- true
		return nil
	}
	if !a.box.full() {
		a.box.push(env)
		a.growLocked()
		a.mu.Unlock()
		return nil
	}
	switch a.set.overflow {
	case OverflowDropOldest, OverflowDropNewest:
		dropped := env
		if a.set.overflow == OverflowDropOldest {
			var old envelope[T]
			a.box.pop(&old)
			a.box.push(env)
			dropped = &old
		}
		a.c.dropped++
		a.countLettersLocked(1)
		a.mu.Unlock()
		a.deadLetter(dropped, ReasonDropped, dropped.lastErr(), dropped.attempt()-1, nil)
		return nil
	case OverflowBlock:
		if wait {
			return a.waitLocked(ctx, env)
		}
	}
	a.c.rejected++
	a.mu.Unlock()
	return a.refuse(env, a.errFull)
}

// refuse returns err for a task the actor did not accept, after giving it to
// the dead letters if Config.DeadLetterRejected asks for it.
func (a *Actor[T]) refuse(env *envelope[T], err error) error {
	if a.set.deadLetterRejected {
		a.put(DeadLetter[T]{Actor: a.name, Task: a.task(env), Reason: ReasonRejected, Err: err, Time: time.Now()})
	}
	return err
}

// refuseRest counts the payloads a batch did not get to send as submitted and
// rejected with err.
func (a *Actor[T]) refuseRest(payloads []T, x *extras, now time.Duration, err error) {
	if len(payloads) == 0 {
		return
	}
	a.mu.Lock()
	first := a.nextID + 1
	a.nextID += uint64(len(payloads))
	a.c.submitted += uint64(len(payloads))
	a.c.rejected += uint64(len(payloads))
	a.mu.Unlock()
	if !a.set.deadLetterRejected {
		return
	}
	for i, p := range payloads {
		env := envelope[T]{id: first + uint64(i), enq: now, payload: p, x: x}
		a.refuse(&env, err)
	}
}

// A sender is a send waiting for room in a full mailbox.
type sender[T any] struct {
	env        envelope[T]
	err        error         // the outcome, set before done is signalled
	letter     bool          // Close refused it and counts its letter in a.letters: the send puts it, then marks it put
	done       chan struct{} // signalled once the send is settled
	queued     bool          // in the actor's senders list
	prev, next *sender[T]
}

// waitLocked queues env's sender until a worker makes room, ctx ends or the
// actor closes. It is called with a.mu held and returns with it released.
func (a *Actor[T]) waitLocked(ctx context.Context, env *envelope[T]) error {
	s := a.senderPool.Get().(*sender[T])
	s.env = *env
	a.senders.pushBack(s)
	a.mu.Unlock()

	if done := ctx.Done(); done == nil {
		// A context that cannot end, such as context.Background: a
		// receive costs less than a select.
		<-s.done
	} else {
		select {
		case <-s.done:
		case <-done:
			a.mu.Lock()
			if s.queued {
				a.senders.remove(s)
				a.c.rejected++
				a.mu.Unlock()
				a.release(s)
				return a.refuse(env, fmt.Errorf("send to %q: waiting for room in the mailbox: %w", a.name, ctx.Err()))
			}
			a.mu.Unlock()
			<-s.done // settled meanwhile: take its outcome
		}
	}
	err, letter := s.err, s.letter
	a.release(s)
	if err != nil {
		err = a.refuse(env, err)
		if letter {
			a.letters.Done()
		}
		return err
	}
	return nil
}

func (a *Actor[T]) release(s *sender[T]) {
	*s = sender[T]{done: s.done}
	a.senderPool.Put(s)
}

// senderList is an intrusive FIFO of senders, so that a sender whose context
// ends can leave from the middle.
type senderList[T any] struct {
	head, tail *sender[T]
	n          int
}

func (l *senderList[T]) pushBack(s *sender[T]) {
	s.queued = true
	s.prev, s.next = l.tail, nil
	if l.tail == nil {
		l.head = s
	} else {
		l.tail.next = s
	}
	l.tail = s
	l.n++
}

func (l *senderList[T]) popFront() *sender[T] {
	s := l.head
	if s != nil {
		l.remove(s)
	}
	return s
}

func (l *senderList[T]) remove(s *sender[T]) {
	if s.prev == nil {
		l.head = s.next
	} else {
		s.prev.next = s.next
	}
	if s.next == nil {
		l.tail = s.prev
	} else {
		s.next.prev = s.prev
	}
	s.prev, s.next, s.queued = nil, nil, false
	l.n--
}
