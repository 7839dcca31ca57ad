package actor

// A phase is where the actor is in its shutdown. It changes only through
// enterLocked, under the actor's mutex, which checks the move against
// phaseMoves. The phases that Close waits for each have a channel of the
// actor named for them (drained, halted, closed), which whoever moves the
// actor there closes once what the phase promises is done.
type phase uint8

const (
	phaseOpen     phase = iota // accepting tasks
	phaseDraining              // Close began: sends are refused, and the workers drain the mailbox and the retries
	phaseHalted                // draining stopped: what waited was dead-lettered and the running tasks cancelled; their handlers have Config.Grace to return
	phaseDrained               // closing, with no task and no worker left
	phaseClosed                // the first Close's work is done: its result is final
	phases                     // the number of phases
)

var phaseNames = [phases]string{"open", "draining", "halted", "drained", "closed"}

func (p phase) String() string { return phaseNames[p] }

// phaseMoves is the table of the moves the actor's phase may make, a bit
// per phase it may move to. Who makes each move:
//
//	open     → draining  Close or Stop, the first to begin (beginClose)
//	draining → drained   whoever takes the last task or worker away
//	                     (checkDrainedLocked): Close itself when nothing
//	                     was left, else a worker leaving
//	draining → halted    Stop, or a Close whose context ended (halt)
//	halted   → drained   the last worker leaving, its handler returned
//	                     within the grace (checkDrainedLocked)
//	drained  → closed    the first Close, once the dead letters are put
//	                     (shutdown)
//	halted   → closed    the first Close, once the grace has passed and the
//	                     handlers still running are abandoned (shutdown)
//
// Only a draining actor halts: once it is halted, drained or closed,
// nothing is left to halt. A worker that outlives the grace leaves a
// closed actor without moving it.
var phaseMoves = [phases]uint8{
	phaseOpen:     1 << phaseDraining,
	phaseDraining: 1<<phaseDrained | 1<<phaseHalted,
	phaseHalted:   1<<phaseDrained | 1<<phaseClosed,
	phaseDrained:  1 << phaseClosed,
}

// enterLocked moves the actor to phase to. A move the table does not list
// is a bug in this package, which would break the order of the shutdown:
// it panics.
func (a *Actor[T]) enterLocked(to phase) {
	from := a.phase
	if phaseMoves[from]&(1<<to) == 0 {
		panic(badMove{"the shutdown of " + a.name, from, to})
	}
	a.phase = to
	a.phaseMoves[from][to]++
}

// closingLocked reports whether Close or Stop has begun: sends are
// refused.
func (a *Actor[T]) closingLocked() bool { return a.phase != phaseOpen }

// haltedLocked reports whether the actor stopped draining: a task that
// fails now is dead-lettered for the halt, and a worker that finds no task
// leaves. A closed actor's workers are those that outlived the grace.
func (a *Actor[T]) haltedLocked() bool { return a.phase == phaseHalted || a.phase == phaseClosed }
