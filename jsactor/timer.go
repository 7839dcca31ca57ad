package jsactor

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// early is how far ahead of its due time a waiting task is moved to the
// ready subject rather than held again.
const early = 2 * time.Millisecond

// startTimers starts consuming the delayed and backoff subjects: each
// task there is held by a negative acknowledgement delayed until it is
// due, then copied to the ready subject.
func (a *Actor[T]) startTimers(ctx context.Context) error {
	for _, name := range []string{consumerDelayed, consumerBackoff} {
		c, err := a.stream.Consumer(ctx, name)
		if err != nil {
			return fmt.Errorf("jsactor: New %q: consumer %q: %w", a.name, name, err)
		}
		cc, err := c.Consume(a.onDue, jetstream.PullMaxMessages(256), jetstream.ConsumeErrHandler(a.onConsumeError))
		if err != nil {
			a.stopTimers()
			return fmt.Errorf("jsactor: New %q: consume %q: %w", a.name, name, err)
		}
		a.timers = append(a.timers, cc)
	}
	return nil
}

// stopTimers stops consuming the delayed and backoff subjects; what they
// hold unacknowledged is delivered again after its ack wait.
func (a *Actor[T]) stopTimers() {
	for _, cc := range a.timers {
		cc.Stop()
		<-cc.Closed()
	}
	a.timers = nil
}

// onDue holds a waiting task until it is due, then copies it to the ready
// subject: the copy carries the task's ID and counts, and its message ID
// keeps a second copy out when this one's acknowledgement is lost.
func (a *Actor[T]) onDue(msg jetstream.Msg) {
	rec, _, err := recordOf(msg)
	if err != nil {
		a.log.Error("a waiting message has no metadata", "subject", msg.Subject(), "error", err)
		return
	}
	if wait := time.Until(rec.due); wait > early {
		if err := msg.NakWithDelay(wait); err != nil {
			a.log.Warn("could not hold a waiting task until due; it is delivered again after its ack wait", "task_id", rec.id, "error", err)
		}
		return
	}
	rec.due = time.Time{}
	rec.gen++
	m := &nats.Msg{Subject: a.l.subject(placeReady, keyToken(rec.key)), Header: rec.header(), Data: msg.Data()}
	ctx, cancel := context.WithTimeout(context.Background(), a.settleTimeout())
	defer cancel()
	if _, err := a.js.PublishMsg(ctx, m, jetstream.WithMsgID(copyID(&rec))); err != nil {
		a.log.Warn("could not move a due task to the ready subject; trying again", "task_id", rec.id, "error", err)
		_ = msg.NakWithDelay(100 * time.Millisecond)
		return
	}
	a.dueCopiedFault(rec.id)
	if err := msg.DoubleAck(ctx); err != nil {
		a.log.Warn("acknowledgement of a due task's move not confirmed; its copy is kept once", "task_id", rec.id, "error", err)
	}
}

func (a *Actor[T]) onConsumeError(_ jetstream.ConsumeContext, err error) {
	if a.stopCtx.Err() == nil {
		a.log.Debug("consuming waiting tasks", "error", err)
	}
}
