package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgpool"
)

// postgresBackend loads a PostgreSQL server through two pgpool pools. It
// creates a schema of its own with an accounts table of numUsers rows and
// an audit table, and drops it at the end. A request reads an account by
// its key, and sends its audit task on the same pool, as a request
// handler would. The audit pool holds the connections of the durable
// audit actor (see durable.go), whose tasks insert their row in their own
// transaction, so that each task leaves one row however many times it runs.
type postgresBackend struct {
	dsn      string
	schema   string
	created  bool // whether the schema exists, to be dropped
	requests *pgpool.Pool
	audits   *pgpool.Pool
}

func newPostgresBackend(ctx context.Context, dsn string, reqCfg, auditCfg actorpool.Config) (*postgresBackend, error) {
	if _, err := pgx.ParseConfig(dsn); err != nil {
		return nil, fmt.Errorf("--postgres: %w; write it as postgres://user@host:5432/dbname", err)
	}
	b := &postgresBackend{dsn: dsn, schema: "actorpool_demo_" + runID()}
	var err error
	b.requests, err = b.pool(reqCfg)
	if err == nil {
		b.audits, err = b.pool(auditCfg)
	}
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		err = b.setup(pctx)
		cancel()
	}
	if err != nil {
		b.close(context.Background())
		return nil, err
	}
	return b, nil
}

// pool returns a pool of connections to the server, of cfg's shape: the
// settings pgxpool has fields for go to those fields, the rest to
// pgpool.Config.Pool.
func (b *postgresBackend) pool(cfg actorpool.Config) (*pgpool.Pool, error) {
	pc, err := pgpool.ParseConfig(b.dsn)
	if err != nil {
		return nil, err
	}
	pc.MaxConns = int32(cfg.MaxObjects)
	pc.MinConns = int32(cfg.MinObjects)
	pc.MinIdleConns = int32(cfg.MinIdle)
	pc.MaxConnIdleTime = cfg.MaxIdleTime
	pc.MaxConnLifetime = cfg.MaxLifetime
	if j := cfg.LifetimeJitter; j > 0 {
		// actorpool takes up to the jitter off the lifetime, pgpool adds
		// it, as pgxpool does.
		pc.MaxConnLifetime, pc.MaxConnLifetimeJitter = cfg.MaxLifetime-j, j
	}
	pc.PingTimeout = cfg.TestTimeout
	pc.HealthCheckPeriod = cfg.ValidationInterval
	cfg.MaxObjects, cfg.MinObjects, cfg.MinIdle = 0, 0, 0
	cfg.MaxIdleTime, cfg.MaxLifetime, cfg.LifetimeJitter = 0, 0, 0
	cfg.TestTimeout, cfg.ValidationInterval = 0, 0
	pc.Pool = cfg
	return pgpool.NewWithConfig(context.Background(), pc)
}

func (b *postgresBackend) setup(ctx context.Context) error {
	err := b.requests.With(ctx, func(ctx context.Context, c *pgpool.Conn) error {
		_, err := c.Exec(ctx, fmt.Sprintf(`
			CREATE SCHEMA %[1]s;
			CREATE TABLE %[1]s.accounts (id int PRIMARY KEY, name text NOT NULL, balance bigint NOT NULL);
			INSERT INTO %[1]s.accounts SELECT i, 'user ' || i, i * 100 FROM generate_series(0, %[2]d) i;
			CREATE TABLE %[1]s.audit (id bigserial PRIMARY KEY, client int NOT NULL, account int NOT NULL,
				page int NOT NULL, at timestamptz NOT NULL);
			ANALYZE %[1]s.accounts;`, b.schema, numUsers-1))
		return err
	})
	b.created = err == nil
	if err != nil {
		return fmt.Errorf("cannot prepare PostgreSQL at %s: %w; is the server running, and may this user create a schema?", b.where(), err)
	}
	return nil
}

// where names the server without the password.
func (b *postgresBackend) where() string {
	cfg, err := pgx.ParseConfig(b.dsn)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
}

func (b *postgresBackend) describe() string { return "PostgreSQL at " + b.where() }

func (b *postgresBackend) scratch() string { return "schema " + b.schema }

func (b *postgresBackend) request(ctx context.Context, r *request) error {
	return b.requests.With(ctx, func(ctx context.Context, c *pgpool.Conn) error {
		r.got = now()
		var name string
		var balance int64
		err := c.QueryRow(ctx, "SELECT name, balance FROM "+b.schema+".accounts WHERE id = $1", r.user).Scan(&name, &balance)
		if err != nil {
			return fmt.Errorf("reading an account: %w", err)
		}
		return nil
	})
}

// audit writes the row of the durable audit task whose handler received
// ctx, in the task's transaction.
func (b *postgresBackend) audit(ctx context.Context, e auditEvent) error {
	tx, err := pgactor.Tx(ctx)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "INSERT INTO "+b.schema+".audit (client, account, page, at) VALUES ($1, $2, $3, $4)",
		e.Client, e.User, e.Page, e.At)
	if err != nil {
		return fmt.Errorf("writing an audit row: %w", err)
	}
	return nil
}

func (b *postgresBackend) stats() (actorpool.Stats, actorpool.Stats) {
	return b.requests.Stats(), b.audits.Stats()
}

func (b *postgresBackend) close(ctx context.Context) error {
	var errs []error
	if b.created {
		err := b.requests.With(ctx, func(ctx context.Context, c *pgpool.Conn) error {
			_, err := c.Exec(ctx, "DROP SCHEMA IF EXISTS "+b.schema+" CASCADE")
			return err
		})
		if err != nil && !errors.Is(err, actorpool.ErrClosed) {
			errs = append(errs, fmt.Errorf("dropping schema %s: %w", b.schema, err))
		}
	}
	if b.requests != nil {
		errs = append(errs, b.requests.Shutdown(ctx))
	}
	if b.audits != nil {
		errs = append(errs, b.audits.Shutdown(ctx))
	}
	return errors.Join(errs...)
}
