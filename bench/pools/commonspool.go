package pools

import (
	"context"

	commons "github.com/jolestar/go-commons-pool/v2"
)

type commonsPool struct {
	p *commons.ObjectPool
}

// NewCommonsPool returns go-commons-pool v2 with MaxTotal and MaxIdle set to
// the size, blocking when exhausted, last in first out, and no evictor.
func NewCommonsPool(cfg Config) (Pool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	f := cfg.Factory
	factory := commons.NewPooledObjectFactory(
		func(ctx context.Context) (any, error) { return f.Create(ctx) },
		func(_ context.Context, po *commons.PooledObject) error {
			f.Destroy(po.Object.(*Object))
			return nil
		},
		nil, nil, nil)
	conf := commons.NewDefaultPoolConfig()
	conf.MaxTotal = cfg.Size
	conf.MaxIdle = cfg.Size
	conf.MinIdle = 0
	conf.LIFO = true
	conf.BlockWhenExhausted = true
	conf.TimeBetweenEvictionRuns = 0
	return &commonsPool{p: commons.NewObjectPool(context.Background(), factory, conf)}, nil
}

func (a *commonsPool) Do(ctx context.Context, fn func(*Object)) error {
	v, err := a.p.BorrowObject(ctx)
	if err != nil {
		return err
	}
	o := v.(*Object)
	fn(o)
	return a.p.ReturnObject(ctx, o)
}

func (a *commonsPool) Close() error {
	a.p.Close(context.Background())
	return nil
}
