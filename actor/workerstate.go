package actor

import "fmt"

// A workerState is where a worker is in its round: looking for a task,
// running one, or leaving. It changes only through moveLocked, under the
// actor's mutex, which checks the move against workerMoves and keeps the
// count of workers in each state that Stats and growLocked read.
type workerState uint8

const (
	workerStarting  workerState = iota // started; has not yet looked for a task
	workerIdle                         // looking for a task, or parked until one comes
	workerRunning                      // its task is in the handler, or about to be
	workerFailed                       // its task failed and was retried or dead-lettered; it has not yet come back for another
	workerAbandoned                    // Close stopped waiting for its handler and dead-lettered its task
	workerGone                         // it has left the actor
	workerStates                       // the number of states
)

var workerStateNames = [workerStates]string{"starting", "idle", "running", "failed", "abandoned", "gone"}

func (s workerState) String() string { return workerStateNames[s] }

// workerMoves is the table of the moves a worker may make, a bit per state
// it may move to. Who makes each move:
//
//	starting  → idle       the worker, as it looks for its first task (next)
//	idle      → running    the worker, taking a task (next); or a sender or a
//	                       retry, handing one to the worker parked last
//	                       (handOffLocked)
//	idle      → gone       the worker, when nothing is left to do or its
//	                       keep-alive passed (next, park)
//	running   → idle       the worker, its task completed (next)
//	running   → failed     the worker, its task failed (fail)
//	running   → abandoned  Close, once the grace has passed (abandon)
//	failed    → idle       the worker, back for another task (next)
//	failed    → gone       the worker, whose handler called runtime.Goexit
//	                       (afterGoexit)
//	abandoned → gone       the worker, once its handler returned (next,
//	                       afterGoexit)
//
// A worker counts in Stats.Busy while running, failed or abandoned, and in
// Stats.Running while running. Moving from one task of a hand to the next
// is no move: the worker stays running (see hand.go).
var workerMoves = [workerStates]uint8{
	workerStarting:  1 << workerIdle,
	workerIdle:      1<<workerRunning | 1<<workerGone,
	workerRunning:   1<<workerIdle | 1<<workerFailed | 1<<workerAbandoned,
	workerFailed:    1<<workerIdle | 1<<workerGone,
	workerAbandoned: 1 << workerGone,
}

// moveLocked moves w to state to. A move the table does not list is a bug
// in this package, which would break the counts: it panics.
func (a *Actor[T]) moveLocked(w *worker[T], to workerState) {
	from := w.state
	if workerMoves[from]&(1<<to) == 0 {
		panic(badMove{"worker " + w.name, from, to})
	}
	w.state = to
	a.inState[from]--
	a.inState[to]++
	a.moves[from][to]++
}

// A badMove is the panic of a move that its table does not list: a
// worker's (workerMoves) or the actor's shutdown phase (phaseMoves).
type badMove struct {
	what     string // what moved: a worker, or an actor's shutdown
	from, to fmt.Stringer
}

func (m badMove) Error() string {
	return "actor: " + m.what + " cannot move from " + m.from.String() + " to " + m.to.String()
}

// busyLocked returns the number of workers whose handler is running, or
// whose task has ended but who have not yet come back for another.
func (a *Actor[T]) busyLocked() int {
	return a.inState[workerRunning] + a.inState[workerFailed] + a.inState[workerAbandoned]
}
