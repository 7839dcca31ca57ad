package pgactor

import (
	"context"
	"errors"
	"log/slog"
)

// Fencing keeps a worker whose lease passed to another — a frozen process
// thawed, a partition healed — from writing over the newer run. Each fetch
// of a task increments its runs, the fencing token of the lease it makes,
// and every statement on a lease — a heartbeat, a completion, a retry, a
// dead letter, a give-back — names the task, the token and this instance
// as the owner (the store's fence, and the one-task statements), so that
// it matches no row once the lease has passed on: the result is refused,
// and logged, and the task's row keeps the newer run's. taskstates.go says
// which moves the lease fences.

// errRefused is a completion's outcome when its lease had passed to
// another worker.
var errRefused = errors.New("pgactor: lease passed to another worker")

// refused logs a result that the database refused because the lease had
// passed to another worker.
func (a *Actor[T]) refused(worker string, l *lease, what string) {
	a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: result refused: the task's lease passed to another worker",
		slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", l.id), slog.Int("run", int(l.token)), slog.String("outcome", what))
}
