// Package jsactor runs the task actor of package actor over NATS
// JetStream, so that tasks survive the death of any process, every
// process connected to the same NATS shares one actor's work, and the
// queue scales with a NATS cluster rather than with one PostgreSQL
// primary.
//
// A handler moves unchanged: it is the same actor.Handler, it receives
// the same actor.Task, and Config has the ideas of actor.Config and
// pgactor.Config — Workers, MaxAttempts, Backoff, a per-attempt Timeout,
// Grace, OnError, a Lease renewed by a Heartbeat, MaxLost — and Stats has
// pgactor.Stats's shape. Code that only sends can be written once against
// an actor.Sender, which [Actor.Sender] returns.
//
//	nc, err := nats.Connect(url) // or jsserver.Start for an embedded server
//	audit, err := jsactor.New(ctx, nc, "audit", handler, jsactor.Config[Entry]{Workers: 8, MaxAttempts: 5})
//	id, err := audit.Send(ctx, Entry{User: "ann", Action: "login"})
//
// This package does not import the NATS server: a program that connects to
// a remote NATS compiles only the client. Package jsserver runs a server
// inside the process, the default of `actorpool demo --jetstream`.
//
// # Layout
//
// An actor named "audit" under the default Prefix "actorpool" owns three
// streams, which New creates, or checks when they exist:
//
//   - actorpool_audit, a work-queue stream: ready tasks on
//     actorpool.audit.r.<key>, tasks sent to run later on
//     actorpool.audit.d.<key>, retries waiting for their backoff on
//     actorpool.audit.b.<key>, where <key> is "_", or a hash of the task's
//     unique key. Three durable pull consumers read it: "run" feeds the
//     workers, "delayed" and "backoff" move tasks that have come due to
//     the ready subject.
//   - actorpool_audit_dead, the dead letters, on actorpool.audit.dead.
//   - actorpool_audit_counts, a counter stream that holds the actor's
//     counters across every process (see Stats).
//
// A task's ID is the stream sequence at which its send was stored, and it
// stays the same when the task is retried, given back or comes due. A
// replayed dead letter is a new task, with a new ID.
//
// # Guarantees
//
// Send returns once the stream has stored the task (its publish was
// acknowledged); from then on the task survives kill -9 of any process
// and, as far as the server's own durability setting goes, of the server
// (see package jsserver: an R3 stream on a three-node cluster for
// production). Each send carries a message ID, and a send that Send
// retries after a lost acknowledgement is stored once, as long as the
// retry reaches the server within the stream's duplicate window
// (Config.DedupWindow, two minutes by default). Two Sends of the same
// payload are two tasks; pass [MsgID] to make a send idempotent across
// calls or processes, within the same window.
//
// A handler runs at least once per task, and more than once when a worker
// dies, freezes or is cut off after the handler started and before its
// acknowledgement reached the server. Effects should be idempotent (the
// task's ID is stable across runs). There is no transactional send and
// no exactly-once effect: for those use package pgactor, whose sends can
// join the caller's transaction and whose handlers can write in the
// task's own.
//
// # Leases and what JetStream cannot promise
//
// A worker holds a task for Config.Lease (the consumer's ack wait, five
// seconds by default), which the process renews for all its running
// tasks every Config.Heartbeat with in-progress acknowledgements,
// followed by a round trip to the server. A task whose worker died is
// delivered again once its lease runs out, to whichever worker asks next:
// within Lease plus a fetch, about six seconds by default.
//
// The server accepts an acknowledgement that arrives after the ack wait,
// even once the message was delivered to another worker (nats-server
// issues 4786 and 6937). So each worker fences itself: it counts a lease
// as held only until Lease after the moment it sent the request or the
// renewal that the server has since confirmed, on its own monotonic
// clock, less a tenth of the Lease. A renewal counts only if that proof
// still held when the server's confirmation came back — the server
// ignores a renewal that arrives after the ack wait, yet answers the round
// trip — so a lease once lost is never renewed, and a worker frozen past
// its lease finds it lost when it thaws. A pull request waits at most a
// quarter of the Lease on the server, so that the lease of a task it
// brings can be proven from the request. A worker that cannot prove its lease
// still holds cancels its handler's context with cause [ErrLeaseLost] and
// neither acknowledges, retries nor dead-letters the task: its result is
// dropped and the task runs again elsewhere. What remains is a window
// that no client can close: a process frozen (SIGSTOP, a long GC pause,
// a VM stall) after it checked its lease and before its acknowledgement
// left; and, in a cluster, a renewal confirmed by the server the client
// is connected to but not yet applied by the consumer's leader. An
// acknowledgement sent in that window removes the task even if another
// worker is running it; the other worker's own result is then refused by
// the server and logged.
//
// # Attempts, retries and dead letters
//
// An attempt is charged when a handler runs and when its worker is lost;
// a task given back at Close or snoozed is not charged. JetStream counts
// every delivery, so the count the actor needs travels with the message:
// a retry, a give-back, a snooze and a due task each publish a copy of
// the task carrying its ID, attempts charged and runs lost so far, and
// its last error, then acknowledge the original. Each copy has a message
// ID derived from the task's ID and the copy's generation, and each dead
// letter one derived from the task's ID, so that either, published
// twice, is stored once.
//
// The copy or dead letter is stored before the original is acknowledged,
// and that acknowledgement can be lost — the connection drops, the server
// restarts, the worker dies — or held back: a worker whose lease ran out
// while the store was under way does not acknowledge. The original is
// then delivered again, and before it runs, the worker asks the server
// whether the task's next copy or its dead letter is stored, by
// publishing their message IDs with an expectation no message meets, so
// that nothing is stored. If one is, the original is acknowledged and
// does not run, and the task ends once, as its copy or its dead letter. A
// redelivered task asks again before its result is recorded, for a copy
// that a slow store of the earlier delivery added while it ran; a store
// slower still is part of the window no client can close (see Leases).
// The server answers from the streams' duplicate window
// (Config.DedupWindow, at least four Leases): an original delivered again
// after it — no worker of the actor asked for tasks for that long — runs
// again beside its copy, and its task may end twice. On a replicated
// stream (Replicas 3 on a cluster) no such question is asked: the server
// checks it only as the replicas apply it, and each takes its refusal
// for a failed write that stops the stream. There a lost acknowledgement after a
// stored copy or dead letter still runs the task again, and it may end
// twice.
//
// A failed attempt waits for its backoff (Config.Backoff) as a copy on
// the backoff subject, held by the backoff consumer with a negative
// acknowledgement delayed until the task is due. A task that failed
// MaxAttempts times, failed with an error marked actor.Permanent, whose
// workers were lost more than MaxLost times, or whose payload no longer
// decodes goes to the dead-letter stream with its reason, last error,
// attempts and times ([DeadLetter]). [Actor.Replay] moves a dead letter
// back exactly once.
//
// # Order
//
// Tasks are delivered in the order the stream stored them; with several
// workers and processes, that is the order they start in, not the order
// they end in. A retried, given-back or delayed task joins the end of the
// queue when it comes due. JetStream has no per-message priority: the
// Priority option of pgactor has no counterpart here, and [Priority] is
// refused with [ErrPriority].
//
// # Stats
//
// [Actor.Stats] reads the counters from the counter stream and the gauges
// from the consumers' state. The counters are kept by each process and
// added to the stream every Config.FlushInterval and at Close: they are
// exact once every process that ran the actor has closed, and are short
// by at most one interval of a process killed. A success counts in
// Completed once the server confirms its acknowledgement, which a worker
// sends again while its lease holds when no answer comes, so that an
// acknowledgement or its answer lost on the way is counted once and its
// task does not run again. One still unconfirmed after half a Lease (a
// second at least) is not counted: if the server never got it, the task
// runs again and counts then, its first run as Lost; if the server
// applied it, Completed stays short by one. The gauges are each exact as
// the server reports them, but they are read one after another, so
// Accepted = Completed + DeadLettered + Queued + Scheduled + Running +
// Retrying holds only while the actor is still, short of the tasks
// deleted (Admin.Delete) and of those acknowledgements.
//
// # Tracing
//
// A [Tracer] in Config.Tracer — package tasktrace's hook, which pgactor
// shares — follows each send and each attempt: StartSend returns headers,
// such as a W3C traceparent and baggage, that the send adds to each
// task's message; StartAttempt gets them back in whichever process takes
// the task up, wraps the handler's context, and learns the attempt's
// outcome: completed, retried, dead_lettered, lost, given_back or
// snoozed. The headers go with every copy of the task — a retry, a
// give-back, a snooze, a delayed task come due — into its dead letter,
// and back on Replay, so that one trace runs from the send to each
// attempt. Header names beginning "Actorpool-" or "Nats-" are jsactor's
// and the server's: a Tracer's are dropped. Package oteltask implements
// it with OpenTelemetry:
//
//	jsactor.Config[Entry]{Tracer: oteltask.NewTracer("jsactor")}
//
// An actor without a Tracer adds no headers and spends nothing per send
// or attempt. A run after a lost one has no AttemptInfo.Due: when the
// lost run's lease ran out is not known.
package jsactor
