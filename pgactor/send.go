package pgactor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/pgpool"
	"github.com/jackc/pgx/v5"
)

// A SendOption sets a property of the tasks being sent.
type SendOption func(*sendOptions)

type sendOptions struct {
	typ      string
	at       time.Time
	delay    time.Duration
	key      string
	hasKey   bool
	priority int16
	headers  []byte // a JSON object for the tasks' headers column, or nil: see trace.go
	err      error

	periodKey string        // UniqueFor's key
	period    time.Duration // UniqueFor's period; 0 without it
}

// RunAt makes the task due at t rather than now. A worker takes it within
// Config.PollInterval of t (at once if this process's own workers scheduled
// it as a retry).
func RunAt(t time.Time) SendOption {
	return func(o *sendOptions) {
		switch {
		case t.IsZero():
			o.err = errors.New("RunAt: the time is zero")
		case t.After(latestRunAt):
			o.err = fmt.Errorf("RunAt: %v is later than PostgreSQL stores a time (%v)", t, latestRunAt)
		case t.Before(earliestRunAt):
			o.err = fmt.Errorf("RunAt: %v is earlier than PostgreSQL stores a time (%v)", t, earliestRunAt)
		}
		o.at, o.delay = t, 0
	}
}

// latestRunAt is the last microsecond of the last day a timestamptz
// holds.
var latestRunAt = time.Date(294276, time.December, 31, 23, 59, 59, 999999000, time.UTC)

// earliestRunAt is the first microsecond a timestamptz holds, 24 November
// 4714 BC (year -4713 as Go counts them): a RunAt before it, though due
// at once, was refused by the server's "timestamp out of range", which
// named neither the option nor the bound.
var earliestRunAt = time.Date(-4713, time.November, 24, 0, 0, 0, 0, time.UTC)

// After makes the task due d after the send, by the database's clock.
func After(d time.Duration) SendOption {
	return func(o *sendOptions) {
		if d < 0 {
			o.err = fmt.Errorf("After: the delay must be ≥ 0, got %v", d)
		}
		o.at, o.delay = time.Time{}, d
	}
}

// UniqueKey refuses the send, with a [*DuplicateError], while a live task
// of the actor — queued, scheduled, running or waiting for a retry — has
// the same key. Once that task completes or is dead-lettered the key is
// free again. The refusal names the live task, so a caller that wants
// "send unless already pending" treats ErrDuplicate as success.
func UniqueKey(key string) SendOption {
	return func(o *sendOptions) {
		switch {
		case key == "":
			o.err = errors.New("UniqueKey: the key is empty")
		case !storableText(key):
			o.err = fmt.Errorf("UniqueKey(%q): the key must be valid UTF-8, without NUL", key)
		}
		o.key, o.hasKey = key, true
	}
}

// Priority ranks the task among those due: higher runs first; the default
// is 0. Within a priority, tasks run in the order they became due, then
// the order they were sent.
func Priority(p int16) SendOption {
	return func(o *sendOptions) { o.priority = p }
}

// WithType names the kind of work a task is, for logs, errors and dead
// letters; without it a task's type is the Go type of its payload.
func WithType(name string) SendOption {
	return func(o *sendOptions) {
		switch {
		case name == "":
			o.err = errors.New("WithType: the name is empty")
		case !storableText(name):
			o.err = fmt.Errorf("WithType(%q): the name must be valid UTF-8, without NUL", name)
		}
		o.typ = name
	}
}

// Send stores a task for payload and returns its ID once it is committed.
//
// On the context a handler received, the task joins the handler's task
// transaction (see Tx): it exists only if the handler's task completes. On
// the context of a pgpool.With callback, it is sent on that callback's
// connection, inside the transaction open on it if any: it exists only if
// that transaction commits. Otherwise it commits on its own.
//
// It fails with a [*DuplicateError] when UniqueKey's key is taken, an
// [*EncodeError] when the codec refuses the payload, and actor.ErrClosed
// after Close.
func (a *Actor[T]) Send(ctx context.Context, payload T, opts ...SendOption) (uint64, error) {
	ids, err := a.send(ctx, nil, []T{payload}, opts, false)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// SendTx is Send inside the caller's transaction: the task exists only if
// tx commits, and runs once it has.
func (a *Actor[T]) SendTx(ctx context.Context, tx pgx.Tx, payload T, opts ...SendOption) (uint64, error) {
	if tx == nil {
		return 0, fmt.Errorf("pgactor: SendTx to %q: the transaction is nil", a.name)
	}
	ids, err := a.send(ctx, tx, []T{payload}, opts, false)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// SendBatch stores a task for each payload in one statement — all or none
// — and returns their IDs in the order of payloads. The options apply to
// every task; UniqueKey is refused, since the tasks would share the key.
// It joins a transaction as Send does.
func (a *Actor[T]) SendBatch(ctx context.Context, payloads []T, opts ...SendOption) ([]uint64, error) {
	return a.send(ctx, nil, payloads, opts, true)
}

// SendBatchTx is SendBatch inside the caller's transaction.
func (a *Actor[T]) SendBatchTx(ctx context.Context, tx pgx.Tx, payloads []T, opts ...SendOption) ([]uint64, error) {
	if tx == nil {
		return nil, fmt.Errorf("pgactor: SendBatchTx to %q: the transaction is nil", a.name)
	}
	return a.send(ctx, tx, payloads, opts, true)
}

func (a *Actor[T]) send(ctx context.Context, tx pgx.Tx, payloads []T, opts []SendOption, batch bool) ([]uint64, error) {
	if a.shut.phase() >= phaseStopping {
		return nil, fmt.Errorf("send to %q: %w", a.name, actor.ErrClosed)
	}
	o := sendOptions{typ: a.typ}
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.err != nil:
		return nil, fmt.Errorf("pgactor: send to %q: %w", a.name, o.err)
	case batch && o.hasKey:
		return nil, fmt.Errorf("pgactor: SendBatch to %q: UniqueKey would give every task of the batch the same key: send them one by one", a.name)
	case batch && o.period > 0:
		return nil, fmt.Errorf("pgactor: SendBatch to %q: UniqueFor would give every task of the batch the same key and period, so at most one could be sent: send them one by one", a.name)
	case o.hasKey && o.period > 0:
		return nil, fmt.Errorf("pgactor: send to %q: UniqueKey and UniqueFor together: use one of them", a.name)
	case batch && len(payloads) == 0:
		return nil, nil
	}
	if a.tracer != nil {
		return a.traceSend(ctx, tx, payloads, &o, batch)
	}
	return a.sendEncoded(ctx, tx, payloads, &o, batch)
}

// sendEncoded encodes payloads and stores them as tasks with o.
func (a *Actor[T]) sendEncoded(ctx context.Context, tx pgx.Tx, payloads []T, o *sendOptions, batch bool) ([]uint64, error) {
	enc := make([][]byte, len(payloads))
	for i, p := range payloads {
		b, err := a.codec.Encode(p)
		if err != nil {
			return nil, &EncodeError{Actor: a.name, Type: a.typ, Err: err}
		}
		enc[i] = notNil(b)
	}
	if tx != nil {
		return a.insert(ctx, tx, true, enc, o, batch)
	}
	if st := handlerTxFrom(ctx); st != nil && st.pool == a.pool {
		tx, err := st.begin(ctx)
		if err != nil {
			return nil, fmt.Errorf("pgactor: send to %q: begin the task's transaction: %w", a.name, err)
		}
		return a.insert(ctx, tx, true, enc, o, batch)
	}
	var ids []uint64
	err := a.pool.With(ctx, func(ctx context.Context, c *pgpool.Conn) error {
		var err error
		conn := c.Conn()
		ids, err = a.insert(ctx, conn, conn.PgConn().TxStatus() != 'I', enc, o, batch)
		return err
	})
	return ids, err
}

// insert runs the send statement. Inside a transaction it always notifies
// — the notification goes out when the transaction commits, and
// PostgreSQL sends one per transaction — and outside one, the notifier
// decides.
func (a *Actor[T]) insert(ctx context.Context, db Querier, inTx bool, enc [][]byte, o *sendOptions, batch bool) ([]uint64, error) {
	notify := inTx || a.notifier.claim()
	var ids []uint64
	var err error
	switch {
	case batch:
		ids, err = a.store.sendBatch(ctx, db, enc, o, notify)
	case o.period > 0:
		var id uint64
		var fresh bool
		id, fresh, err = a.store.sendFor(ctx, db, enc[0], o, notify)
		if err == nil && !fresh {
			return nil, &DuplicateError{Actor: a.name, Key: o.periodKey, ID: id, Period: o.period}
		}
		ids = []uint64{id}
	default:
		var id uint64
		id, err = a.store.send(ctx, db, enc[0], o, notify)
		if err == nil && id == 0 {
			d := &DuplicateError{Actor: a.name, Key: o.key}
			d.ID, _ = a.store.liveKey(ctx, db, o.key)
			return nil, d
		}
		ids = []uint64{id}
	}
	if err != nil {
		return nil, fmt.Errorf("pgactor: send to %q: %w", a.name, err)
	}
	if !inTx {
		if !notify {
			a.notifier.trail()
		}
		if a.handler != nil {
			a.poke()
		}
	}
	return ids, nil
}

// runAt returns the time RunAt set, or nil for none.
func (o *sendOptions) runAt() *time.Time {
	if o.at.IsZero() {
		return nil
	}
	return &o.at
}

// notNil returns b, or an empty slice for nil: a codec may encode a
// payload as no bytes with a nil slice (protobuf does, for a message with
// every field unset), which pgx would send as NULL, refused by the NOT
// NULL payload columns.
func notNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
