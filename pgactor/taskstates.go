package pgactor

import "strings"

// A taskState is where a task is, as the tables say. Only the store's
// statements move a task from one state to another (taskMoves), except
// for time: a scheduled or retrying task becomes queued when it falls
// due, and a running one expired when its lease runs out.
type taskState uint8

const (
	stateNone      taskState = iota // no row: not sent yet, or a dead letter deleted
	stateQueued                     // waiting and due: owner NULL, available_at passed
	stateScheduled                  // waiting for its run time (RunAt, After), never attempted
	stateRetrying                   // waiting for its backoff after a failed attempt
	stateRunning                    // leased: an owner, and a lease not run out
	stateExpired                    // leased, its lease run out: the next fetch takes it, the run counted lost
	stateCanceling                  // leased and marked canceled: the next heartbeat cancels its handler
	stateCompleted                  // its row deleted, counted completed
	stateDead                       // a dead letter
	taskStates                      // the number of states
)

var taskStateNames = [taskStates]string{"none", "queued", "scheduled", "retrying", "running", "expired", "canceling", "completed", "dead"}

func (s taskState) String() string { return taskStateNames[s] }

// The fences, which refuse a move and leave the task where it was.
const (
	// fenceLease: the statement names the lease — id, fencing token and
	// owner (fence.go) — and matches no row once the lease has passed to
	// another worker.
	fenceLease = "the lease: id, fencing token and owner"
	// fenceKey: a live task of the actor holds the same unique key.
	fenceKey = "a live task of the actor holding the same unique key"
	// fencePeriod: a task was sent for the same period — a schedule's
	// fire time, or a UniqueFor key's bucket — as its row in
	// unique_periods says.
	fencePeriod = "a task sent for the same period: its row in unique_periods"
)

// A taskMove is a move a statement of the store makes.
type taskMove struct {
	by    string      // the store's method that runs the statement
	when  string      // what else the move needs, where a method makes more than one
	from  []taskState // the states it moves a task from
	to    taskState
	fence string // what refuses the move, leaving the task where it was; "" for nothing
}

// taskMoves is the task state machine: every move of a task, the method of
// the store that makes it, and what fences it. TestTaskMoves drives each
// move, and each fence, through its method against PostgreSQL, and fails
// on a row that says otherwise.
var taskMoves = []taskMove{
	// Sending.
	{by: "send", from: []taskState{stateNone}, to: stateQueued, fence: fenceKey},
	{by: "send", when: "RunAt or After in the future", from: []taskState{stateNone}, to: stateScheduled, fence: fenceKey},
	{by: "sendBatch", from: []taskState{stateNone}, to: stateQueued},
	{by: "sendBatch", when: "RunAt or After in the future", from: []taskState{stateNone}, to: stateScheduled},
	{by: "sendFor", from: []taskState{stateNone}, to: stateQueued, fence: fencePeriod},
	{by: "sendFor", when: "RunAt or After in the future", from: []taskState{stateNone}, to: stateScheduled, fence: fencePeriod},

	// The scheduler.
	{by: "fire", from: []taskState{stateNone}, to: stateQueued, fence: fencePeriod},

	// The pump's rounds.
	{by: "fetch", from: []taskState{stateQueued, stateExpired}, to: stateRunning,
		fence: "a row lock: a task another fetch is taking is skipped (FOR UPDATE SKIP LOCKED)"},
	{by: "heartbeat", from: []taskState{stateRunning, stateExpired}, to: stateRunning, fence: fenceLease},
	{by: "heartbeat", from: []taskState{stateCanceling}, to: stateCanceling, fence: fenceLease},
	{by: "complete", from: []taskState{stateRunning, stateExpired, stateCanceling}, to: stateCompleted, fence: fenceLease},
	{by: "giveBack", from: []taskState{stateRunning, stateExpired, stateCanceling}, to: stateQueued, fence: fenceLease},

	// A worker's outcomes.
	{by: "completeOne", from: []taskState{stateRunning, stateExpired, stateCanceling}, to: stateCompleted, fence: fenceLease},
	{by: "retry", from: []taskState{stateRunning, stateExpired, stateCanceling}, to: stateRetrying, fence: fenceLease},
	{by: "deadLetter", from: []taskState{stateRunning, stateExpired, stateCanceling}, to: stateDead, fence: fenceLease},
	{by: "snooze", when: "its first attempt", from: []taskState{stateRunning, stateExpired, stateCanceling}, to: stateScheduled, fence: fenceLease},
	{by: "snooze", when: "a later attempt", from: []taskState{stateRunning, stateExpired, stateCanceling}, to: stateRetrying, fence: fenceLease},

	// Cancel, Replay, DeleteDeadLetters.
	// cancel locks the task's row first, so that each task is canceled
	// in the state it is in once no other statement moves it.
	{by: "cancel", when: "the task waits", from: []taskState{stateQueued, stateScheduled, stateRetrying}, to: stateDead},
	{by: "cancel", when: "the task runs", from: []taskState{stateRunning, stateExpired}, to: stateCanceling,
		fence: "canceled already"},
	{by: "replay", from: []taskState{stateDead}, to: stateQueued, fence: fenceKey},
	{by: "deleteDeadLetters", from: []taskState{stateDead}, to: stateNone},

	// An operator's: Admin.RunNow and Admin.Delete, and the Actor's.
	{by: "runNow", from: []taskState{stateQueued, stateScheduled, stateRetrying}, to: stateQueued,
		fence: "an owner: a running task is not moved"},
	{by: "deleteTasks", from: []taskState{stateQueued, stateScheduled, stateRetrying, stateDead}, to: stateNone,
		fence: "an owner: a running task is not deleted (cancel it instead)"},
}

func (m taskMove) String() string {
	from := make([]string, len(m.from))
	for i, s := range m.from {
		from[i] = s.String()
	}
	s := m.by + ": " + strings.Join(from, ", ") + " → " + m.to.String()
	if m.when != "" {
		s += " (" + m.when + ")"
	}
	return s
}
