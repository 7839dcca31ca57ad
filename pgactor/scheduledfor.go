package pgactor

import (
	"context"
	"encoding/json"
	"time"
)

// ScheduledFor returns the schedule that sent the task whose handler
// received ctx, and the period it was sent for: the fire time, in UTC, as
// the task's headers HeaderSchedule and HeaderPeriod name them. A handler
// uses it to work on its period's data — the night a nightly report is
// for, however late the task runs — rather than on time.Now's. ok is
// false for a task that no schedule sent, and on a context that is not a
// handler's. A replayed task keeps its schedule and period.
//
// The headers are decoded when it is called, so that handlers that do
// not ask spend nothing on them.
func ScheduledFor(ctx context.Context) (schedule string, period time.Time, ok bool) {
	st := handlerTxFrom(ctx)
	if st == nil || st.headers == nil {
		return "", time.Time{}, false
	}
	return decodeScheduled(st.headers)
}

// decodeScheduled returns the schedule and period that headers, a task's
// headers column, name; ok is false when they name none, or not both.
func decodeScheduled(headers []byte) (schedule string, period time.Time, ok bool) {
	var h struct {
		Schedule string `json:"pgactor-schedule"`
		Period   string `json:"pgactor-period"`
	}
	if err := json.Unmarshal(headers, &h); err != nil || h.Schedule == "" {
		return "", time.Time{}, false
	}
	period, err := time.Parse(time.RFC3339Nano, h.Period)
	if err != nil {
		return "", time.Time{}, false
	}
	return h.Schedule, period.UTC(), true
}
