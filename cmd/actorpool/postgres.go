package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/actorpool/actorpool"
)

// postgresBackend loads a PostgreSQL server through two pools of pgx
// connections. It creates a schema of its own with an accounts table of
// numUsers rows and an audit table, and drops it at the end. A request
// reads an account by its key; an audit write inserts a row, with
// synchronous_commit off, as audit logs that may lose their last rows in a
// crash usually are.
type postgresBackend struct {
	dsn      string
	schema   string
	created  bool // whether the schema exists, to be dropped
	requests *actorpool.Pool[*pgx.Conn]
	audits   *actorpool.Pool[*pgx.Conn]
}

func newPostgresBackend(ctx context.Context, dsn string, reqCfg, auditCfg actorpool.Config) (*postgresBackend, error) {
	if _, err := pgx.ParseConfig(dsn); err != nil {
		return nil, fmt.Errorf("--postgres: %w; write it as postgres://user@host:5432/dbname", err)
	}
	b := &postgresBackend{dsn: dsn, schema: "actorpool_demo_" + runID()}
	var err error
	b.requests, err = actorpool.New(b.factory(""), reqCfg)
	if err == nil {
		b.audits, err = actorpool.New(b.factory("SET synchronous_commit TO off"), auditCfg)
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

// factory makes connections that run init, if any, once connected.
func (b *postgresBackend) factory(init string) actorpool.Factory[*pgx.Conn] {
	return actorpool.FactoryFuncs[*pgx.Conn]{
		CreateFunc: func(ctx context.Context) (*pgx.Conn, error) {
			c, err := pgx.Connect(ctx, b.dsn)
			if err != nil {
				return nil, err
			}
			if init != "" {
				if _, err := c.Exec(ctx, init); err != nil {
					c.Close(context.Background())
					return nil, err
				}
			}
			return c, nil
		},
		DestroyFunc: func(c *pgx.Conn) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			c.Close(ctx)
		},
		ValidateFunc: func(c *pgx.Conn) error {
			if c.IsClosed() {
				return errors.New("connection closed")
			}
			if c.PgConn().TxStatus() != 'I' {
				return errors.New("connection left in a transaction")
			}
			return nil
		},
		TestFunc: func(ctx context.Context, c *pgx.Conn) error { return c.Ping(ctx) },
	}
}

func (b *postgresBackend) setup(ctx context.Context) error {
	err := b.requests.With(ctx, func(ctx context.Context, c *pgx.Conn) error {
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

func (b *postgresBackend) request(ctx context.Context, r *request) error {
	return b.requests.With(ctx, func(ctx context.Context, c *pgx.Conn) error {
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

func (b *postgresBackend) audit(ctx context.Context, e auditEvent) error {
	return b.audits.With(ctx, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "INSERT INTO "+b.schema+".audit (client, account, page, at) VALUES ($1, $2, $3, $4)",
			e.Client, e.User, e.Page, e.At)
		if err != nil {
			return fmt.Errorf("writing an audit row: %w", err)
		}
		return nil
	})
}

func (b *postgresBackend) stats() (actorpool.Stats, actorpool.Stats) {
	return b.requests.Stats(), b.audits.Stats()
}

func (b *postgresBackend) close(ctx context.Context) error {
	var errs []error
	if b.created {
		err := b.requests.With(ctx, func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Exec(ctx, "DROP SCHEMA IF EXISTS "+b.schema+" CASCADE")
			return err
		})
		if err != nil && !errors.Is(err, actorpool.ErrClosed) {
			errs = append(errs, fmt.Errorf("dropping schema %s: %w", b.schema, err))
		}
	}
	for _, p := range []*actorpool.Pool[*pgx.Conn]{b.requests, b.audits} {
		if p != nil {
			if err := p.Close(ctx); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
