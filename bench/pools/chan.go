package pools

import (
	"context"
	"sync/atomic"
)

// chanPool is the pool most Go code writes first: idle objects in a
// buffered channel as big as the pool, created on demand until the pool is
// full, after which takers wait on the channel. It is first in, first out
// for idle objects, and the runtime's channel wait queue makes it first come,
// first served for takers.
type chanPool struct {
	f       *Factory
	idle    chan *Object
	size    int64
	created atomic.Int64
}

// NewChan returns a buffered-channel pool, written here.
func NewChan(cfg Config) (Pool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &chanPool{f: cfg.Factory, idle: make(chan *Object, cfg.Size), size: int64(cfg.Size)}, nil
}

func (p *chanPool) Do(ctx context.Context, fn func(*Object)) error {
	o, err := p.take(ctx)
	if err != nil {
		return err
	}
	fn(o)
	p.idle <- o // never blocks: the channel holds the whole pool
	return nil
}

func (p *chanPool) take(ctx context.Context) (*Object, error) {
	select {
	case o := <-p.idle:
		return o, nil
	default:
	}
	for {
		n := p.created.Load()
		if n >= p.size {
			break
		}
		if p.created.CompareAndSwap(n, n+1) {
			o, err := p.f.Create(ctx)
			if err != nil {
				p.created.Add(-1)
				return nil, err
			}
			return o, nil
		}
	}
	select {
	case o := <-p.idle:
		return o, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *chanPool) Close() error {
	for {
		select {
		case o := <-p.idle:
			p.f.Destroy(o)
		default:
			return nil
		}
	}
}
