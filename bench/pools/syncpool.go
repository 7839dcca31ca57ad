package pools

import (
	"context"
	"sync"
)

// syncPool is sync.Pool: no bound, no waiting, objects dropped at the
// garbage collector's whim. It is the floor: what a get and a put cost when
// nothing is counted or shared.
type syncPool struct {
	p sync.Pool
}

// NewSyncPool returns sync.Pool making objects with the factory. The size
// is ignored, and objects it drops are never destroyed.
func NewSyncPool(cfg Config) (Pool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	f := cfg.Factory
	sp := &syncPool{}
	sp.p.New = func() any {
		o, _ := f.Create(context.Background()) // fails only on a cancelled context
		return o
	}
	return sp, nil
}

func (a *syncPool) Do(_ context.Context, fn func(*Object)) error {
	o := a.p.Get().(*Object)
	fn(o)
	a.p.Put(o)
	return nil
}

func (a *syncPool) Close() error { return nil }
