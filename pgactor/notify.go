package pgactor

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// notifyWindow is the shortest time between two notifications a process
// sends for an actor outside callers' transactions.
//
// A transaction that notifies takes a lock, at commit, that every other
// notifying transaction of the server waits for until it has committed —
// WAL flush included — so notifying on every send would make the sends of
// every process commit one at a time. Instead a send outside a caller's
// transaction notifies only if none did in the last notifyWindow; a send
// that does not arranges one trailing notification at the end of the
// window, after it has committed, so that the last task sent is never
// missed. Idle workers elsewhere learn of a task at most notifyWindow
// late; the process's own workers are woken directly.
const notifyWindow = time.Millisecond

// A notifier spaces out an actor's notifications.
type notifier struct {
	store  *store
	log    *slog.Logger
	window time.Duration

	mu     sync.Mutex
	last   time.Time // when the last notification was sent or claimed
	armed  bool      // a trailing notification is scheduled
	timer  *time.Timer
	closed bool
	wg     sync.WaitGroup // the trailing notification being sent
}

// claim reports whether the send about to run should notify.
func (n *notifier) claim() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	if now.Sub(n.last) >= n.window {
		n.last = now
		return true
	}
	return false
}

// trail schedules a notification at the end of the window, unless one is
// scheduled already; a send that committed without notifying calls it.
func (n *notifier) trail() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.armed || n.closed {
		return
	}
	n.armed = true
	n.wg.Add(1)
	d := max(time.Until(n.last.Add(n.window)), 0)
	if n.timer == nil {
		n.timer = time.AfterFunc(d, n.send)
	} else {
		n.timer.Reset(d)
	}
}

// send is the trailing notification.
func (n *notifier) send() {
	defer n.wg.Done()
	n.mu.Lock()
	n.armed = false
	n.last = time.Now()
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.store.notify(ctx); err != nil {
		n.log.LogAttrs(context.Background(), slog.LevelDebug, "pgactor: notify failed; workers elsewhere find the task at their next poll",
			slog.String("actor", n.store.actor), slog.Any("error", err))
	}
}

// close cancels a scheduled notification and waits for one being sent.
func (n *notifier) close() {
	n.mu.Lock()
	n.closed = true
	if n.armed && n.timer.Stop() {
		n.armed = false
		n.wg.Done()
	}
	n.mu.Unlock()
	n.wg.Wait()
}
