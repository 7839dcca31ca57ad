package pools

import (
	"context"

	"github.com/jackc/puddle/v2"
)

type puddlePool struct {
	p *puddle.Pool[*Object]
}

// NewPuddle returns jackc/puddle v2, the pool under pgxpool, with MaxSize
// set to the size.
func NewPuddle(cfg Config) (Pool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p, err := puddle.NewPool(&puddle.Config[*Object]{
		Constructor: cfg.Factory.Create,
		Destructor:  cfg.Factory.Destroy,
		MaxSize:     int32(cfg.Size),
	})
	if err != nil {
		return nil, err
	}
	return &puddlePool{p: p}, nil
}

func (a *puddlePool) Do(ctx context.Context, fn func(*Object)) error {
	r, err := a.p.Acquire(ctx)
	if err != nil {
		return err
	}
	fn(r.Value())
	r.Release()
	return nil
}

func (a *puddlePool) Close() error {
	a.p.Close()
	return nil
}
