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
