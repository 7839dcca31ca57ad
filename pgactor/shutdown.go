package pgactor

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// A phase is where an actor is in its life; Close moves it through them,
// by the moves of phaseMoves, and each move into a phase the pump, the
// workers or maintenance wait for closes the channel named for it.
type phase uint32

const (
	phaseRunning   phase = iota // taking and running tasks
	phaseStopping               // Close began: sends fail, the pump fetches no more and the idle workers leave, maintenance stops; running handlers finish while Close's context lasts
	phaseCanceling              // Close's context ended first: the handlers' contexts are canceled (errClosing), and Close waits Config.Grace for them
	phaseDraining               // the workers are done, or abandoned after the grace: the pump commits what they handed in, then stops; a completion that comes later is not recorded, and its task is given back
	phaseClosed                 // the leases still held were given back, and every goroutine of the actor is gone but abandoned workers
	phases                      // the number of phases
)

var phaseNames = [phases]string{"running", "stopping", "canceling", "draining", "closed"}

func (p phase) String() string { return phaseNames[p] }

// phaseMoves is the table of the moves an actor makes, a bit per phase it
// may move to. Close makes every one:
//
//	running   → stopping   as it begins
//	stopping  → canceling  its context ended before the workers were done
//	stopping  → draining   the workers are done
//	canceling → draining   the workers are done, or the grace is over
//	draining  → closed     the pump has stopped, the leases are given back
//	stopping  → closed     a send-only actor: no workers, no pump
var phaseMoves = [phases]uint8{
	phaseRunning:   1 << phaseStopping,
	phaseStopping:  1<<phaseCanceling | 1<<phaseDraining | 1<<phaseClosed,
	phaseCanceling: 1 << phaseDraining,
	phaseDraining:  1 << phaseClosed,
}

// A shutdown is an actor's phase, with what announces it.
type shutdown struct {
	now atomic.Uint32 // the phase; moved under the actor's mutex

	stopping    chan struct{}   // closed on entering phaseStopping
	stoppingCtx context.Context // ends on entering phaseStopping: maintenance's statements
	endStopping context.CancelFunc
	draining    chan struct{} // closed on entering phaseDraining

	moves [phases][phases]int // the moves made, for TestShutdownMoves; guarded by the actor's mutex

	once sync.Once // Close's
	err  error
}

func (s *shutdown) init() {
	s.stopping = make(chan struct{})
	s.draining = make(chan struct{})
	s.stoppingCtx, s.endStopping = context.WithCancel(context.Background())
}

// phase returns the actor's phase.
func (s *shutdown) phase() phase { return phase(s.now.Load()) }

// moveLocked moves to phase to, and announces it. A move the table does
// not list is a bug in this package: it panics. The caller holds the
// actor's mutex, so that what reads the phase under it — a worker handing
// the pump a completion — sees the move before or after, not during.
func (s *shutdown) moveLocked(to phase) {
	from := s.phase()
	if phaseMoves[from]&(1<<to) == 0 {
		panic(badPhaseMove{from, to})
	}
	s.now.Store(uint32(to))
	s.moves[from][to]++
	switch to {
	case phaseStopping:
		close(s.stopping)
		s.endStopping()
	case phaseDraining:
		close(s.draining)
	}
}

// A badPhaseMove is the panic of a move the table does not list.
type badPhaseMove struct{ from, to phase }

func (m badPhaseMove) Error() string {
	return "pgactor: an actor cannot move from " + m.from.String() + " to " + m.to.String()
}

// enter moves the actor to phase to.
func (a *Actor[T]) enter(to phase) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.shut.moveLocked(to)
}

// errClosing is the cause of a handler's context when Close stops waiting
// for it: its task is given back, not failed.
var errClosing = errors.New("pgactor: actor closing")

// Close stops the actor. It stops taking tasks, lets the running handlers
// finish until ctx ends, then cancels their contexts and waits
// Config.Grace for them; the tasks of handlers that failed because of
// that, or that still run, are given back — released at once, their
// attempt not charged — for another process to take. It dead-letters
// nothing: the queue outlives the process. Close may be called any number
// of times from any goroutine; it returns once no goroutine of the actor is
// left, except the workers of handlers that ignored their context past the
// grace period.
//
// The error reports leases it could not give back (the server was
// unreachable): those tasks run again once their lease runs out.
func (a *Actor[T]) Close(ctx context.Context) error {
	a.shut.once.Do(func() { a.shut.err = a.close(ctx) })
	return a.shut.err
}

func (a *Actor[T]) close(ctx context.Context) error {
	a.enter(phaseStopping)
	var err error
	if a.handler != nil {
		a.awaitWorkers(ctx)
		a.enter(phaseDraining)
		<-a.pumpDone
		err = a.giveBackAll()
	}
	a.notifier.close()
	if a.unlisten != nil {
		a.unlisten()
	}
	a.bgWG.Wait()
	a.enter(phaseClosed)
	return err
}

// awaitWorkers waits for the workers to finish their tasks and leave —
// the pump has stopped fetching, and told the idle workers to leave, on
// seeing the actor stopping — until ctx ends; then it cancels the handlers
// and waits Config.Grace more.
func (a *Actor[T]) awaitWorkers(ctx context.Context) {
	idle := make(chan struct{})
	go func() {
		a.workerWG.Wait()
		close(idle)
	}()
	select {
	case <-idle:
	case <-ctx.Done():
		a.enter(phaseCanceling)
		a.cancelAll(errClosing)
		t := time.NewTimer(a.set.grace)
		select {
		case <-idle:
			t.Stop()
		case <-t.C:
			a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: handlers still running after the grace period; their tasks are given back",
				slog.String("actor", a.name), slog.Int("running", a.running()))
		}
	}
}
