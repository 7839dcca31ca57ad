// Package actor runs asynchronous work — write an audit row after a login,
// send a mail — through a named mailbox served by a set of worker goroutines,
// and accounts for every task it accepts.
//
// An [Actor] is built by [New] from a name, a [Handler] and a [Config]. A
// producer hands it a payload with [Actor.Send], [Actor.TrySend],
// [Actor.SendBatch] or [Actor.Ask]; a worker runs the handler with a [Task]
// that carries the payload and the identity the actor gave it: an ID, a type
// name, the attempt number and when it was enqueued.
//
// # Back-pressure
//
// The mailbox is bounded (a ring buffer of Config.Capacity tasks) or, when
// Capacity is zero, unbounded (a list of fixed-size chunks that grows and
// shrinks with the queue). When a bounded mailbox is full, Config.Overflow
// decides: block the sender until there is room (the default), reject the
// task with [ErrMailboxFull], drop the oldest queued task, or drop the new
// one. A dropped task is not lost: it goes to the dead letters.
//
// Workers take tasks in the order they were sent, so one worker runs them in
// that order. While many wait in an unbounded mailbox, a worker takes a run
// of them at once — at most half its share of the queue — and works through
// it without contending with the senders for the mailbox; with several
// workers, tasks then start in an order that is close to, not exactly, the
// order sent. A task taken that way counts in Stats.Queued until it starts,
// and does not wait behind a slow one: a worker that has no task of its own
// takes the first half of those not yet started from the run whose next
// task is the oldest, before it looks in the mailbox.
//
// # Failures
//
// A handler's error, panic, runtime.Goexit or timeout fails one attempt of
// one task, never the actor: a panic is recovered with its stack and the
// worker goes on; a worker ended by Goexit is replaced. Each failure is
// reported to Config.OnError as a [*TaskError] naming the task and the worker
// (the default logs it through log/slog). A failed task is retried in memory
// with exponential backoff and jitter up to Config.MaxAttempts, unless its
// error was marked with [Permanent]. A task waiting for its retry sits on a
// timer, not on a worker.
//
// # Dead letters
//
// A task that the actor accepted but could not complete — dropped, out of
// attempts, permanently failed, or still pending when the actor shut down —
// is handed to a [Sink] as a [DeadLetter] with the reason, its last error and
// the number of attempts. The package provides a rate-limited slog sink (the
// default), an in-memory ring ([RingSink]) and a JSON-lines file
// ([FileSink]); the last two can be read back and re-sent with
// [Actor.Replay].
//
// A line of a dead-letter file that holds no letter — its payload type
// changed between deploys, or a crash cut it short — costs that line only:
// reading reports it as a [*LineError] and goes on. Replay moves the letters
// of a file into the actor: a letter leaves the file, durably, once its task
// has ended, before the next is sent. A replay that stops — an error, its
// context, a crash — is resumed by running it again, which sends only what
// is left; a crash loses no letter and sends at most one twice, the one
// whose task ended last. What stopped a replay, and the lines it left in
// the file for mending by hand, are in its [*ReplayError].
//
// # Shutdown
//
// [Actor.Close] stops accepting tasks and lets the workers drain the
// mailbox. If its context ends first, Close cancels the contexts of the
// running tasks, waits Config.Grace for their handlers to return, sends
// everything left to the dead letters and returns a [*DrainError] that says
// how many tasks were queued and in flight. [Actor.Stop] does the same at
// once. Both may be called any number of times from any goroutine; once they
// return, no goroutine of the actor is left, except the worker of a handler
// that ignored its context past the grace period, whose task has been
// dead-lettered with [ErrAbandoned].
//
// Every accepted task ends exactly once, and [Actor.Stats] proves it: at any
// instant
//
//	Submitted = Completed + DeadLettered + Rejected + Queued + Retrying + Running + Blocked
//
// # A task's life
//
// A task sent is counted in Submitted and then in exactly one of the other
// terms at every instant. It moves, and Stats with it, as this table says;
// completed, dead-lettered and rejected are final.
//
//	from      to             who moves it                                     Stats
//	sent      queued         the send                                         Queued+1
//	sent      running        the send, to the worker parked last              Running+1
//	sent      blocked        a send waiting for room (OverflowBlock)          Blocked+1
//	sent      rejected       a send refused: closed, full, ctx ended          Rejected+1
//	sent      dead-lettered  a send under OverflowDropNewest                  DeadLettered+1, Dropped+1
//	blocked   queued         the worker whose take made room                  Blocked−1, Queued+1
//	blocked   rejected       the sender's ctx ending, or Close                Blocked−1, Rejected+1
//	queued    running        a worker, from the mailbox or a run of it        Queued−1, Running+1
//	queued    dead-lettered  a send under OverflowDropOldest, or Close/Stop   Queued−1, DeadLettered+1 (Dropped+1)
//	running   completed      the worker, the handler having succeeded         Running−1, Completed+1
//	running   retrying       the worker, the attempt having failed            Running−1, Failed+1, Retried+1, Retrying+1
//	running   dead-lettered  the worker, the last attempt having failed       Running−1, Failed+1, DeadLettered+1
//	running   dead-lettered  Close/Stop, the handler outliving the grace      Running−1, DeadLettered+1
//	retrying  queued         the retry's timer, its backoff passed            Retrying−1, Queued+1
//	retrying  running        the retry's timer, to the worker parked last     Retrying−1, Running+1
//	retrying  dead-lettered  Close/Stop                                       Retrying−1, DeadLettered+1
//
// A failed attempt counts in Panicked too when its handler panicked or
// called runtime.Goexit. Close/Stop dead-letters what waits once it stops
// draining: at once for Stop, when its context ends for Close. A task the
// actor did not accept (rejected) reaches the dead letters only when
// Config.DeadLetterRejected is set, and then counts in Rejected alone.
//
// # Observability
//
// Workers are named "<actor>/<n>". Each runs under runtime/pprof labels
// "actor" and "worker", so CPU profiles and goroutine dumps show which actor
// and which worker a goroutine belongs to, and the default logs carry the same
// names as attributes.
//
// Task.Enqueued, and so Stats.OldestQueued, come from a clock that the actor
// refreshes every millisecond while tasks arrive, rather than from a reading
// of the system clock per task, which would cost more than the rest of a
// send: a stamp may be up to about a millisecond early.
package actor
