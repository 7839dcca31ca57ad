package pools

import (
	"context"

	"vitess.io/vitess/go/pools/smartconnpool"
)

// vtConn is the smartconnpool.Connection holding an Object. It never has a
// setting applied: the benchmarks take clean connections only.
type vtConn struct {
	f      *Factory
	obj    *Object
	closed bool
}

func (c *vtConn) ApplySetting(context.Context, *smartconnpool.Setting) error { return nil }
func (c *vtConn) ResetSetting(context.Context) error                         { return nil }
func (c *vtConn) Setting() *smartconnpool.Setting                            { return nil }
func (c *vtConn) IsClosed() bool                                             { return c.closed }

func (c *vtConn) Close() {
	if !c.closed {
		c.closed = true
		c.f.Destroy(c.obj)
	}
}

type vtPool struct {
	p *smartconnpool.ConnPool[*vtConn]
}

// NewSmartconnpool returns vitess's smartconnpool with its capacity set to
// the size, no idle timeout, no lifetime and no refresh.
func NewSmartconnpool(cfg Config) (Pool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	f := cfg.Factory
	p := smartconnpool.NewPool(&smartconnpool.Config[*vtConn]{
		Capacity:     int64(cfg.Size),
		MaxIdleCount: int64(cfg.Size),
	})
	p.Open(func(ctx context.Context) (*vtConn, error) {
		o, err := f.Create(ctx)
		if err != nil {
			return nil, err
		}
		return &vtConn{f: f, obj: o}, nil
	}, nil)
	return &vtPool{p: p}, nil
}

func (a *vtPool) Do(ctx context.Context, fn func(*Object)) error {
	c, err := a.p.Get(ctx, nil)
	if err != nil {
		return err
	}
	fn(c.Conn.obj)
	c.Recycle()
	return nil
}

func (a *vtPool) Close() error { return a.p.CloseWithContext(context.Background()) }
