package pgactor

import (
	"context"
	"time"
)

// stmtSnooze makes a task whose handler returned Snooze due again after
// @delay_us, its attempt not charged: the fetch that took it counted one,
// which this gives back. It counts nothing: the task neither failed nor
// retried.
var stmtSnooze = prepare(`UPDATE {s}.tasks SET owner = NULL, attempt = attempt - 1,
	available_at = now() + @delay_us::bigint * interval '1 microsecond'
WHERE id = @id AND runs = @runs AND owner = @owner`, "id", "runs", "owner", "delay_us")

// snooze makes l's task due again after d, its attempt not charged, and
// returns how many rows it matched: 0 when the lease was no longer this
// instance's.
func (s *store) snooze(ctx context.Context, l *lease, d time.Duration) (int, error) {
	tag, err := s.pool.Exec(ctx, stmtSnooze.in(s.schema), l.id, l.token, s.owner, d.Microseconds())
	return int(tag.RowsAffected()), err
}
