package pools

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
)

// errNoop is what the no-op driver answers to everything but a connect.
var errNoop = errors.New("pools: the no-op driver runs no statements")

// noopConnector connects by creating an Object, so that database/sql's pool
// lends Objects.
type noopConnector struct{ f *Factory }

func (c noopConnector) Connect(ctx context.Context) (driver.Conn, error) {
	o, err := c.f.Create(ctx)
	if err != nil {
		return nil, err
	}
	return &noopConn{f: c.f, obj: o}, nil
}

func (c noopConnector) Driver() driver.Driver { return noopDriver{} }

type noopDriver struct{}

func (noopDriver) Open(string) (driver.Conn, error) { return nil, errNoop }

// noopConn is a driver connection that holds an Object and does nothing.
type noopConn struct {
	f   *Factory
	obj *Object
}

func (c *noopConn) Prepare(string) (driver.Stmt, error) { return nil, errNoop }
func (c *noopConn) Begin() (driver.Tx, error)           { return nil, errNoop }

func (c *noopConn) Close() error {
	c.f.Destroy(c.obj)
	return nil
}

type sqlPool struct {
	db *sql.DB
}

// NewSQL returns database/sql's connection pool over a driver that does
// nothing, with MaxOpenConns and MaxIdleConns both set to the size: the
// default of two idle connections would make it close and reopen
// connections all the time, which is not what a tuned service runs.
func NewSQL(cfg Config) (Pool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	db := sql.OpenDB(noopConnector{f: cfg.Factory})
	db.SetMaxOpenConns(cfg.Size)
	db.SetMaxIdleConns(cfg.Size)
	return &sqlPool{db: db}, nil
}

// Do takes a connection with DB.Conn, the way a caller pins one, and reaches
// the driver's connection through Conn.Raw.
func (a *sqlPool) Do(ctx context.Context, fn func(*Object)) error {
	c, err := a.db.Conn(ctx)
	if err != nil {
		return err
	}
	err = c.Raw(func(dc any) error {
		fn(dc.(*noopConn).obj)
		return nil
	})
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}

func (a *sqlPool) Close() error { return a.db.Close() }
