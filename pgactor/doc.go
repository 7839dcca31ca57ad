// Package pgactor runs the task actor of package actor over a queue stored
// in PostgreSQL, through pgx v5 and a pgpool.Pool, so that tasks survive
// the death of any process and a restart of the server, and every replica
// of a service shares one actor's work.
//
// A handler moves from memory to PostgreSQL unchanged: it is the same
// actor.Handler, it receives the same actor.Task, and Config has the same
// ideas as actor.Config — fixed or elastic workers, MaxAttempts, Backoff,
// a per-attempt Timeout, Grace, OnError — plus what a shared queue needs:
// a Lease, a Heartbeat, a PollInterval, a Schema, a Codec for payloads
// (JSON by default). The senders differ: Send returns the task's ID too
// and takes this package's SendOptions, Stats reads the database and
// needs a context, and there is no mailbox Capacity. Code that only sends
// can be written once against an actor.Sender, which [Actor.Sender] and
// the in-memory actor's Sender both return.
//
//	from, to, err := pgactor.Migrate(ctx, pool, pgactor.DefaultSchema) // once, or `actorpool migrate`
//	audit, err := pgactor.New(ctx, pool, "audit", handler, pgactor.Config[Entry]{Workers: 8, MaxAttempts: 5})
//	id, err := audit.Send(ctx, Entry{User: "ann", Action: "login"})
//
// # Guarantees
//
// A send returns once its task is committed; from then on the task
// survives kill -9 of any process and a crash of the server (as far as the
// server's own durability settings go). A task sent in the caller's
// transaction — [Actor.SendTx], or [Actor.Send] on the context of a
// pgpool.With callback inside a transaction — exists only if that
// transaction commits.
//
// Every task ends exactly once, as the database records it: completed, or
// moved to the dead letters with a reason. [Actor.Stats] reads every
// counter and gauge from one snapshot, in which
//
//	Accepted = Completed + DeadLettered + Queued + Scheduled + Running + Retrying
//
// A handler runs at least once per task, and more than once when a worker
// dies, freezes or is cut off after the handler started and before its
// completion committed: its task runs again elsewhere. A handler whose
// writes go through the task's own transaction, [Tx], has them exactly
// once: the actor commits them together with the task's completion, and a
// run that fails, dies, or has lost its lease has them rolled back. Other
// effects — a mail sent, an HTTP call — happen at least once, and should
// be idempotent (the task's ID is stable across runs).
//
// # Leases
//
// A worker takes a task with a lease of Config.Lease (five seconds by
// default), which the process renews for all its tasks in one statement
// every Config.Heartbeat. When a worker dies, its lease runs out, and the
// task is due again: an idle worker of any process takes it within the
// lease and a PollInterval, six seconds by default; busy ones take it in
// its turn, among the tasks due, by priority and by when each became due.
// The run counts as lost; a task lost more than Config.MaxLost times goes
// to the dead letters with ReasonLost. Each take of a task increments its fencing token, and every
// statement that completes, retries, dead-letters or gives back a task
// names the token it holds: a worker whose lease passed to another — a
// frozen process thawed, a partition healed — has its late result refused
// (and logged), never written over the newer run. Such a worker learns of
// the loss at its next heartbeat, or when a heartbeat is overdue, and its
// handler's context is cancelled with cause [ErrLeaseLost].
//
// # Workers and pickup
//
// In each process one goroutine, the pump, runs the statements that touch
// many leases: each round takes due tasks, commits the completions of the
// workers that finished, renews leases and gives leases back, as one batch
// — one round trip and one commit — and hands the completing workers their
// next tasks. Two rounds run at once, on two connections, so that the
// server works on one while the next gathers. A worker waits until its
// completion has committed before it takes another (a process killed
// after a handler loses no completion it acknowledged), but the
// completions of many workers share each commit.
// A handler that used Tx completes in its own transaction.
//
// Tasks start in order of priority (higher first), then of the time they
// became due, then of their IDs; with several workers and processes, that
// is the order they start in, not the order they end in.
//
// Idle workers are woken by LISTEN/NOTIFY: each process holds one
// connection of its own, outside the pool, listening for the actors of a
// pool and schema. A send outside a caller's transaction notifies at most
// once a millisecond per actor and process, and a send that did not is
// followed by a trailing notification once the millisecond is over (a
// transaction that notifies takes a lock, at commit, that all other
// notifying transactions of the server wait for); a send in a transaction
// notifies at its commit. A process's own workers are woken directly by
// its sends. Polling every Config.PollInterval is the fallback, and is how
// delayed tasks and other processes' retries are found when they fall due.
//
// # Words
//
// The docs and the code use each of these words in one sense.
//
//   - Send: store a task, through Send, SendBatch or their Tx forms. A
//     task waits, queued once it is due (its RunAt or After passed) and
//     scheduled until then, or retrying while its backoff runs.
//   - Fetch: take due tasks, and tasks whose lease ran out, each with a new
//     lease, for this process's workers.
//   - Lease: a process's hold on one task, from the fetch that took it
//     until the statement that settles it. It runs out Config.Lease after
//     the fetch or its last renewal; the process holding it is the task's
//     owner.
//   - Heartbeat: the statement that renews every lease a process holds,
//     every Config.Heartbeat.
//   - Fencing token: the count of a task's fetches, which each fetch
//     increments. Every statement on a lease names the task, its token and
//     its owner; once the lease has passed to another it matches nothing:
//     it is fenced off, and its result refused.
//   - Lost: a lease that ran out while its worker was dead, frozen or cut
//     off, its task taken by a fetch elsewhere. The handler still running
//     on it is canceled with ErrLeaseLost; Stats.Lost counts such runs.
//   - The pump: the one goroutine of an actor in a process that runs the
//     statements on many leases — the fetch, the completions, the
//     heartbeat, the give-backs — in rounds.
//   - Round: one batch of the pump, one round trip and one commit; two run
//     at once.
//   - Settle: record what became of a task once its handler returned. A
//     completion, a retry and a dead letter end its lease; a give-back
//     returns it.
//   - Complete: delete a task whose handler succeeded, counting it. A round
//     commits many workers' completions at once; a handler that used Tx
//     commits its own.
//   - Retry: make a task whose attempt failed due again after its Backoff.
//   - Dead-letter: move a task to the dead letters, with a Reason; it runs
//     no more unless replayed.
//   - Give back: release a lease at once, its attempt not charged, so that
//     any worker takes the task now: what Close does with the tasks it
//     stops waiting for.
//   - Forget: drop a lease from the process's own records, once it is
//     settled or lost: no statement.
//   - Phase: where an actor is in its life: running, then, in Close,
//     stopping, canceling, draining and closed.
//
// # PgBouncer
//
// Behind PgBouncer in transaction mode, notifications are not delivered:
// set Config.DisableListen, and a shorter PollInterval to bound pickup.
// Everything else holds no session state: each statement, each pump round
// and each migration is one transaction, the advisory lock of Migrate is a
// transaction's, and maintenance elects itself with an UPDATE. pgx's
// default prepared statements need PgBouncer 1.21 or later with
// max_prepared_statements set. Only direct connections are tested.
//
// # Retries and dead letters
//
// A failed attempt is retried after the Backoff, as a row due at that time:
// it holds no worker, no lease and no connection meanwhile. An error
// marked actor.Permanent, attempts spent, a task canceled with
// [Actor.Cancel], a task lost too often, and a payload that no longer
// decodes (its type changed between deploys; [ReasonUndecodable]) move the
// task, in the transaction that takes it off the queue, to the dead
// letters, with its reason, last error, attempts and times. Dead letters
// are kept until [Actor.DeleteDeadLetters]; [Actor.DeadLetters] reads them
// page by page, and [Actor.Replay] moves them back to the queue atomically:
// a letter replayed by many callers at once moves once.
//
// # Tracing
//
// A [Tracer] in Config.Tracer follows each send and each attempt:
// StartSend returns headers — a trace context, baggage — that the send
// stores with each task, and StartAttempt gets them back in the process
// that runs it, wraps the handler's context, and learns the attempt's
// [Outcome] when it is recorded. Headers follow a task into the dead
// letters and back on replay. Package otelpgactor implements it with
// OpenTelemetry; pgactor imports no tracing library, and without a
// Tracer stores no headers and spends nothing per send or attempt.
// [AttemptInfo].Due, when the task became due, is the fetch's for every
// attempt — after a send, a retry's backoff, a lost lease — so a Tracer
// measures each attempt's time in queue.
//
// # Periodic tasks
//
// [Actor.Schedule] registers, in the schedules table, a schedule that
// sends the actor a task at each fire time of a spec: "@every 15m" (the
// multiples of the duration since the Unix epoch), a 5-field cron
// expression in UTC (or CRON_TZ=<zone>), or @hourly, @daily, @weekly,
// @monthly, @yearly. Every running instance of the actor runs a scheduler,
// with no leader: it wakes when the earliest schedule is due by the
// database's clock, or every PollInterval, and in one transaction takes
// the due schedules FOR UPDATE SKIP LOCKED, sends each one's task, and
// moves its next fire time past now. A row of unique_periods per schedule
// and fire time refuses a second task for a period, whatever happens to
// the transactions. Fire times missed while no process ran are sent once,
// for the latest, or skipped, as [OnMissed] says. A scheduled task's
// headers name its schedule and period, and its handler reads them with
// [ScheduledFor]. [UniqueFor] uses the same table to send at most one task
// per key per period.
//
// # Operating
//
// [Admin] operates the actors of a schema without their payload types —
// for an operator's tool or a console — and an Actor has the same for its
// own tasks: [Admin.Tasks] pages through tasks, live and dead, in ID
// order, through indexes; [Admin.RunNow] makes waiting tasks due now;
// [Admin.Delete] deletes waiting tasks and dead letters, never a running
// one; [Admin.Pause] stops every process from taking an actor's tasks
// until [Admin.Resume], which notifies them. A handler that cannot do its
// work yet returns [Snooze]: its task waits, its attempt not counted.
//
// # Shutdown
//
// [Actor.Close] stops taking tasks, lets the running handlers finish until
// its context ends, cancels them, waits Config.Grace, and gives back the
// tasks still held — released at once, their attempt not charged — so that
// another process takes them. It dead-letters nothing: the queue outlives
// the process.
//
// # Storage and vacuum
//
// A completed task's row is deleted when it completes, and the counters
// are kept as rows of increments that maintenance folds into one row per
// actor, so the tables hold the live tasks, the dead letters and little
// else. But each task inserts, updates and deletes row versions, and only
// VACUUM makes their room reusable: a queue's tables need vacuuming often,
// more often than autovacuum's defaults (a fifth of the table changed)
// do it on a small, busy table, and not at all when autovacuum is off.
// So every Config.MaintenanceInterval one process — elected by an UPDATE
// of a one-row table — folds the counters, runs VACUUM (ANALYZE) on each of
// the schema's tables holding more than a thousand dead rows and a fifth
// of its live ones, and ANALYZE on those much changed. A round that
// vacuumed more than 25,000 dead rows brings the rounds of the next
// interval sooner, in proportion (up to 8 times as often), so that a
// faster machine's churn does not grow the tables more between vacuums.
// VACUUM leaves a table's empty end pages to the rows to come: cutting
// them off needs the table's exclusive lock, which a busy queue's own
// statements would keep it waiting for, for seconds. That needs the role
// that owns the tables (the one that ran Migrate); for another role,
// PostgreSQL skips the table with a warning: then set Config.DisableVacuum
// and have autovacuum do it, for instance
//
//	ALTER TABLE pgactor.tasks SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
//
// As with any table, a transaction left open anywhere on the server keeps
// VACUUM from removing the rows deleted since it began.
//
// # Schema
//
// [Migrate] creates the tables in a schema of their own (DefaultSchema,
// or Config.Schema) and upgrades them, each version once, under an
// advisory lock: processes migrating at once are safe. [New] refuses a
// schema that has not been migrated, with an error wrapping [ErrNoSchema]
// that says what to run. The tables are described where the migrations
// are, in migrate.go.
package pgactor
