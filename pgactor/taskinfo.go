package pgactor

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// TaskState is where a task is, as an operator sees it: the states of
// taskstates.go, less those a task is in for no time (none, completed),
// and with a lease that ran out shown as running, since its worker may
// still be running it.
type TaskState string

// The task states an operator sees.
const (
	TaskQueued    TaskState = "queued"    // due, waiting for a worker
	TaskScheduled TaskState = "scheduled" // waiting for its run time, never attempted
	TaskRetrying  TaskState = "retrying"  // waiting for its backoff after a failed attempt
	TaskRunning   TaskState = "running"   // leased by a worker (lease running or run out)
	TaskCanceling TaskState = "canceling" // running and marked canceled
	TaskDead      TaskState = "dead"      // a dead letter
)

// taskStatesShown are the TaskStates, in the order the docs list them.
var taskStatesShown = []TaskState{TaskQueued, TaskScheduled, TaskRetrying, TaskRunning, TaskCanceling, TaskDead}

// TaskInfo is one task as stored: live, or a dead letter. Its payload is
// left encoded, so that a tool that does not know the actor's payload type
// can show it.
type TaskInfo struct {
	ID       uint64
	Actor    string
	Type     string
	State    TaskState
	Payload  []byte // as the actor's codec encoded it (JSON by default)
	Priority int16
	Key      string // unique key, "" if none
	Enqueued time.Time
	// RunAt is when the task is due while it waits, and when its lease
	// runs out while it runs; zero for a dead letter.
	RunAt     time.Time
	Started   time.Time // its last attempt's start; zero if never run
	Attempt   int       // attempts counted (a snooze does not count)
	Runs      int       // times a worker took it, lost and snoozed runs included
	Lost      int       // runs whose worker was lost
	Owner     string    // the process holding it while running
	LastError string
	Reason    string    // dead letters: why (Reason's text); "" otherwise
	DeadAt    time.Time // dead letters: when
	Headers   []byte    // the task's headers, a JSON object, or nil
}

// TaskFilter selects tasks; its zero value selects the first hundred of
// every actor, live and dead.
type TaskFilter struct {
	Actor  string      // only this actor's; "" for all
	States []TaskState // only tasks in one of these; none for every state
	Key    string      // only the tasks with this unique key; "" for all
	Since  time.Time   // only tasks enqueued at or after Since; zero for all
	Until  time.Time   // only tasks enqueued before Until; zero for all
	After  uint64      // keyset cursor: only IDs greater than After
	Limit  int         // at most this many: 0 means 100; more than MaxTaskLimit is refused
}

// MaxTaskLimit is the largest TaskFilter.Limit.
const MaxTaskLimit = 1000

// TaskPage is one page of tasks in ID order; Next is the cursor for the
// next page (TaskFilter.After), 0 when this page is the last.
type TaskPage struct {
	Tasks []TaskInfo
	Next  uint64
}

// ActorInfo is one actor registered in a schema.
type ActorInfo struct {
	Name     string
	Paused   bool
	PausedAt time.Time // zero unless Paused
	Stats    Stats     // Stats.Paused is set too
}

// check returns an error naming what is wrong with f, and what is
// allowed, or nil.
func (f *TaskFilter) check() error {
	var bad []string
	if f.After > math.MaxInt64 {
		// IDs are PostgreSQL bigints: a larger cursor would be read as a
		// negative ID, and list every task from the first.
		bad = append(bad, fmt.Sprintf("After %d: want a task ID, at most %d", f.After, int64(math.MaxInt64)))
	}
	if f.Limit < 0 || f.Limit > MaxTaskLimit {
		bad = append(bad, fmt.Sprintf("Limit %d: want 0 (for 100) to %d", f.Limit, MaxTaskLimit))
	}
	for _, s := range f.States {
		if !slices.Contains(taskStatesShown, s) {
			names := make([]string, len(taskStatesShown))
			for i, n := range taskStatesShown {
				names[i] = string(n)
			}
			bad = append(bad, fmt.Sprintf("state %q: want one of %s", s, strings.Join(names, ", ")))
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		bad = append(bad, fmt.Sprintf("Since %v is not before Until %v", f.Since, f.Until))
	}
	if len(bad) > 0 {
		return fmt.Errorf("pgactor: task filter: %w: %s", ErrBadFilter, strings.Join(bad, "; "))
	}
	return nil
}
