package pgactor

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultSchema is the schema the tables live in when Config.Schema is
// empty.
const DefaultSchema = "pgactor"

// SchemaVersion is the version of the tables this library reads and writes:
// Migrate brings a schema to it. It is the number of the last file in
// migrations/ (TestMigrationFiles checks it).
const SchemaVersion = 5

// migrationFiles are the migrations, one file a version, named by their
// four-digit version and what they do: migrations/0002_fetch_by_ctid.sql
// takes a schema from version 1 to 2. {s} stands for the schema's quoted
// name. A migration is never changed once released — its checksum is in
// TestMigrationsReleased — and a new one is added as the next file.
//
// The tables, made by 0001_tables.sql:
//
//   - tasks holds every live task — queued, scheduled, running, or waiting
//     for a retry. available_at is when a task can be taken: its run time
//     while it waits, its lease's expiry while it runs, so that one index
//     serves both taking new tasks and taking over those of dead workers.
//     owner is the process holding the lease, runs counts the times the
//     task was taken and is the lease's fencing token. A completed task's
//     row is deleted.
//   - dead_letters holds the tasks that will not run again, with why, until
//     deleted or replayed.
//   - counts holds the counters, as rows of increments that the statements
//     which change a task's state insert in the same transaction, and that
//     maintenance folds into one row per actor: an insert takes no row
//     lock, so no counter serialises the senders and workers, and a
//     transaction that sent a task holds nothing another send waits on.
//   - actors registers each actor's name; maintenance holds when the
//     tables were last maintained, and until when the process maintaining
//     them now may, to elect one process at a time.
//
// The function {s}.fetch(actor, limit, owner, lease_us) takes due tasks
// for the store's fetch. 0001_tables.sql made it sorting nothing: without
// statistics — a table filled faster than ANALYZE runs, on a server whose
// autovacuum is off — the planner would guess few rows due and sort them
// all, every fetch, rather than read the index in order.
// 0002_fetch_by_ctid.sql replaced it by one whose update finds each
// locked row by its ctid rather than by its id in the primary key. The
// row is locked, so its ctid cannot change before the update, and a TID
// scan reads one heap page where the primary key's lookup reads three
// more: the fetch of 100 tasks reads 955 buffers instead of 1090, in 0.6
// ms instead of 0.9. A SQL function's statements are planned without the
// values of its parameters, so once the table has statistics the planner
// takes LIMIT p_limit for a tenth of the table and would join the update
// to the picked rows by hashing a sequential scan of the whole table
// (TestFetchScansNoTable); hash and merge joins are off so that it takes
// each picked row by its ctid.
//
// 0003_operate.sql added what operating the actors needs: actors.paused_at,
// set while an actor is paused, which the fetch reads so that no process
// takes a paused actor's tasks; a headers column on tasks and
// dead_letters, a JSON object a sender's tracer fills and the handler's
// restores, and a schedule names its period in, which the fetch returns;
// the fetch's task_due, the task's available_at before the fetch moved it
// to the lease's end — the time the send, a retry or a give-back made it
// due, or, for a task whose lease ran out, that lease's expiry — so that
// every attempt's time in queue is known (AttemptInfo.Due). The fetch had
// to be dropped and made again: a function's result columns cannot be
// changed in place. It adds no index: one on (actor, id) for listing an
// actor's tasks in pages cost 10-16% of the queue's throughput, since
// every fetch, heartbeat and retry writes a new entry in each index of
// tasks; the listing walks the primary key instead (storeinspect.go).
//
// 0004_schedules.sql added periodic tasks and uniqueness for a period:
// schedules holds each actor's schedules — its spec, the task it sends,
// what to do with the fire times missed, next_at, its next fire time
// ('infinity' for none), and the last period it sent a task for and that
// task — found due through schedules_due (actor, next_at), and removed
// with their actor; unique_periods holds a row per period a task was sent
// for, a schedule's fire time (kind 'schedule', key the schedule's name)
// or a UniqueFor bucket (kind 'key'), naming the task, until the period
// ends: its primary key is what refuses a second task for a period, and
// maintenance deletes the rows of periods that ended, through
// unique_periods_until.
//
// 0005_fetch_plpgsql.sql made the fetch a PL/pgSQL function with the same
// arguments and result, cheaper on the server:
//
//   - PL/pgSQL keeps a statement's plan for the session, where a SQL
//     function parses, analyzes and plans its body at every call — a fifth
//     of the fetch's time in a burn-down (TestFetchPlannedOnce);
//     plan_cache_mode force_generic_plan keeps that one plan.
//   - JIT is off. A plan made without the limit's value takes it for a
//     tenth of the table, so once a queue held some 250,000 tasks the
//     estimate passed jit_above_cost, and the server compiled every fetch
//     to machine code before running it: 30-35 ms, ten times the fetch
//     itself (TestFetchNotCompiled).
//   - It picks the rows into arrays, then updates them by ctid, without
//     the common table expressions, each stored and read back, that cost
//     10-17% of the fetch's throughput in docs/benchmarks.md's pgbench
//     of the fetch.
//
// A process of an older version calls it as before.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations[v] is the text of the migration to version v; migrations[0]
// is empty.
var migrations = loadMigrations(migrationFiles)

// loadMigrations reads the migrations from fsys's folder migrations, whose
// files must be named NNNN_what.sql with the versions 1 to n, each once.
// A folder that breaks the rule is a bug in this package: it panics.
func loadMigrations(fsys fs.FS) []string {
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		panic(fmt.Sprintf("pgactor: read the migrations: %v", err))
	}
	out := []string{0: ""}
	for _, e := range entries { // sorted by name
		name := e.Name()
		v, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil || len(name) < len("0001_.sql") || name[4] != '_' || v != len(out) {
			panic(fmt.Sprintf("pgactor: migration file %q: want NNNN_what.sql, numbered %04d", name, len(out)))
		}
		text, err := fs.ReadFile(fsys, "migrations/"+name)
		if err != nil {
			panic(fmt.Sprintf("pgactor: read migration %q: %v", name, err))
		}
		out = append(out, string(text))
	}
	return out
}

// schemaName matches the schema names Config.Schema and Migrate accept:
// unquoted PostgreSQL identifiers in lower case, so that the name means
// the same in SQL typed by hand.
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func checkSchema(schema string) error {
	if !schemaName.MatchString(schema) {
		return fmt.Errorf("pgactor: schema name %q: want 1 to 63 lower-case letters, digits and underscores, not starting with a digit", schema)
	}
	return nil
}

// A Beginner starts transactions: a *pgpool.Pool, a *pgx.Conn, or a pgx.Tx
// (whose Begin makes a savepoint).
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Migrate creates the durable actors' tables in schema, or upgrades them,
// to SchemaVersion, and returns the version they were at (0 when the
// schema had none) and the version they are at now. It runs in one
// transaction under an advisory lock on the schema's name, so that
// processes migrating at once apply each migration once: the first
// migrates, the others wait for it and find nothing to do. A schema newer
// than this library is left alone, and reported as it is.
func Migrate(ctx context.Context, db Beginner, schema string) (from, to int, err error) {
	return migrateTo(ctx, db, schema, SchemaVersion)
}

// migrateTo is Migrate to version target, which tests set below
// SchemaVersion to make a schema as an older library left it.
func migrateTo(ctx context.Context, db Beginner, schema string, target int) (from, to int, err error) {
	if err := checkSchema(schema); err != nil {
		return 0, 0, err
	}
	// A transaction that waited for the lock reads the catalog as it was
	// when the transaction began (PostgreSQL takes in other sessions'
	// catalog changes when a transaction begins or locks a table, not
	// when it gets an advisory lock), so it may try to create what the
	// migration it waited for has just created. A new transaction sees it.
	for try := 1; ; try++ {
		from, to, err = migrateOnce(ctx, db, schema, target)
		if err == nil || try == 3 || !alreadyExists(err) {
			return from, to, err
		}
	}
}

// migrateOnce is one try of migrateTo, in one transaction.
func migrateOnce(ctx context.Context, db Beginner, schema string, target int) (from, to int, err error) {
	s := &store{schema: schema}
	tx, err := db.Begin(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("pgactor: migrate schema %q: %w", schema, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := s.lockMigrations(ctx, tx); err != nil {
		return 0, 0, fmt.Errorf("pgactor: migrate schema %q: lock: %w", schema, err)
	}
	from, err = s.version(ctx, tx)
	if err != nil {
		return 0, 0, fmt.Errorf("pgactor: migrate schema %q: read the schema version: %w", schema, err)
	}
	for v := from + 1; v <= target; v++ {
		if err := s.migrate(ctx, tx, v); err != nil {
			return from, from, fmt.Errorf("pgactor: migrate schema %q to version %d: %w", schema, v, err)
		}
	}
	if from >= target {
		return from, from, nil
	}
	if err := s.recordVersion(ctx, tx, target); err != nil {
		return from, from, fmt.Errorf("pgactor: migrate schema %q: %w", schema, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return from, from, fmt.Errorf("pgactor: migrate schema %q: commit: %w", schema, err)
	}
	return from, target, nil
}

// alreadyExists reports whether err is PostgreSQL's refusal to create
// a schema, a table, an index or a function that exists.
func alreadyExists(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "42P06", "42P07", "42710", "42723", "23505": // duplicate schema, table, object, function; unique violation in a catalog
		return true
	}
	return false
}

// A Querier runs statements: a *pgpool.Pool, a *pgx.Conn, or a pgx.Tx.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Version returns the version of the tables in schema: 0 when the schema
// or its tables do not exist.
func Version(ctx context.Context, db Querier, schema string) (int, error) {
	if err := checkSchema(schema); err != nil {
		return 0, err
	}
	v, err := (&store{schema: schema}).version(ctx, db)
	if err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	return v, nil
}

// checkVersion returns an error wrapping ErrNoSchema, which says what to
// run, unless schema is at SchemaVersion or newer.
func checkVersion(ctx context.Context, db Querier, schema string) error {
	v, err := (&store{schema: schema}).version(ctx, db)
	if err != nil {
		return fmt.Errorf("pgactor: schema %q: read the schema version: %w", schema, err)
	}
	if v < SchemaVersion {
		return fmt.Errorf("%w: schema %q is at version %d, this library needs %d: run pgactor.Migrate or `actorpool migrate --postgres URL --schema %s`",
			ErrNoSchema, schema, v, SchemaVersion, schema)
	}
	return nil
}

// isUndefined reports whether err says a table or schema is missing, as
// when the schema was dropped under a running actor.
func isUndefined(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "3F000")
}
