package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/actorpool/actorpool/pgactor"
)

const migrateHelp = `Usage: actorpool migrate --postgres URL [--schema NAME]

Migrate creates the tables of the durable actors (package pgactor) in a
schema of their own, or upgrades them to the version this actorpool knows,
and says which version they went from and to. It runs pgactor.Migrate: one
transaction, under an advisory lock, so that deploys migrating at once are
safe, and each version is applied once. Run it once per database and
schema before the programs that use them, as the role that will own the
tables (it needs CREATE on the database for a new schema).

Flags:
`

const migrateExamples = `
Examples:

  actorpool migrate --postgres 'postgres://app@db:5432/app?sslmode=disable'
  actorpool migrate --postgres "$DATABASE_URL" --schema jobs

Exit codes: 0 the schema is at this actorpool's version; 1 the server cannot
be reached, the role lacks a privilege, the migration failed, or the schema
is newer than this actorpool (nothing is changed then); 2 usage error.
`

// migrateConnectTimeout bounds the connect: a server that does not answer
// fails the command rather than hanging a deploy.
const migrateConnectTimeout = 10 * time.Second

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, schema, code := parseMigrate(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	return migrate(ctx, cfg, schema, stdout, stderr)
}

// parseMigrate parses migrate's command line. It returns the database and
// the schema, or the exit code to stop with, having said why; -1 to go on.
func parseMigrate(args []string, stdout, stderr io.Writer) (*pgx.ConnConfig, string, int) {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	dsn := fs.String("postgres", "", "the PostgreSQL database, as a `URL` (postgres://user@host:5432/db)")
	schema := fs.String("schema", pgactor.DefaultSchema, "the `name` of the schema holding the tables, as pgactor.Config.Schema")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), migrateHelp)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), migrateExamples)
	}
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return nil, "", code
	}
	usageErr := func(format string, args ...any) (*pgx.ConnConfig, string, int) {
		fmt.Fprintf(stderr, "actorpool migrate: "+format+"\nRun 'actorpool help migrate' for its flags.\n", args...)
		return nil, "", exitUsage
	}
	switch {
	case fs.NArg() > 0:
		return usageErr("unexpected argument %q: the command takes flags only", fs.Arg(0))
	case *dsn == "":
		return usageErr("--postgres is required: name the database, such as postgres://app@127.0.0.1:5432/app")
	case checkSchemaFlag(*schema) != nil:
		return usageErr("%v", checkSchemaFlag(*schema))
	}
	cfg, err := pgx.ParseConfig(*dsn)
	if err != nil {
		return usageErr("--postgres: %v; write it as postgres://user@host:5432/dbname", err)
	}
	return cfg, *schema, -1
}

// migrate migrates schema in the database cfg names.
func migrate(ctx context.Context, cfg *pgx.ConnConfig, schema string, stdout, stderr io.Writer) int {
	where := fmt.Sprintf("%s:%d/%s", cfg.Host, cfg.Port, cfg.Database)

	cctx, cancel := context.WithTimeout(ctx, migrateConnectTimeout)
	conn, err := pgx.ConnectConfig(cctx, cfg)
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "actorpool migrate: cannot connect to PostgreSQL at %s as %q: %v; is the server running, and is the URL right?\n", where, cfg.User, err)
		return exitFailure
	}
	defer conn.Close(context.WithoutCancel(ctx))

	from, to, err := pgactor.Migrate(ctx, conn, schema)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "42501": // insufficient_privilege
		fmt.Fprintf(stderr, "actorpool migrate: role %q may not migrate schema %q in database %q: %v; run it as the role that owns the schema, or for a new schema one with CREATE on the database (GRANT CREATE ON DATABASE %s TO %s)\n",
			cfg.User, schema, cfg.Database, err, pgx.Identifier{cfg.Database}.Sanitize(), pgx.Identifier{cfg.User}.Sanitize())
		return exitFailure
	case err != nil:
		fmt.Fprintf(stderr, "actorpool migrate: %v\n", err)
		return exitFailure
	case from > pgactor.SchemaVersion:
		fmt.Fprintf(stderr, "actorpool migrate: schema %q at %s is at version %d, newer than this actorpool knows (%d): a newer release migrated it; nothing was changed. Use that release's actorpool migrate, and run programs built with it.\n",
			schema, where, from, pgactor.SchemaVersion)
		return exitFailure
	case from == to:
		fmt.Fprintf(stdout, "schema %q at %s: at version %d already, nothing to do\n", schema, where, to)
	default:
		fmt.Fprintf(stdout, "schema %q at %s: migrated from version %d to %d\n", schema, where, from, to)
	}
	return exitOK
}

// checkSchemaFlag checks a --schema by pgactor's rule for a schema name,
// so that a name it refuses is a usage error, found before any server is
// tried.
func checkSchemaFlag(schema string) error {
	if schema == "" || (pgactor.Config[struct{}]{Schema: schema}).Validate() != nil {
		return fmt.Errorf("--schema %q: must be 1 to 63 lower-case letters, digits and underscores, not starting with a digit, such as %s", schema, pgactor.DefaultSchema)
	}
	return nil
}
