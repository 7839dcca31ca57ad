package workload

import (
	"context"
	"sync"
	"testing"

	"github.com/actorpool/actorpool"
	"github.com/jackc/puddle/v2"

	"github.com/actorpool/actorpool/bench/pools"
)

// The Direct workloads are Uncontended without the pools.Pool adapter and
// its callback: each calls the pool's own take and give-back, so that the
// figure is the pool's alone. The adapter's two indirect calls are what
// separates them from Uncontended.

// ActorpoolDirect takes and gives back with Pool.Acquire and Lease.Release.
func ActorpoolDirect(b *testing.B) {
	f := &pools.Factory{}
	p, err := actorpool.New(actorpool.FactoryFuncs[*pools.Object]{
		CreateFunc:  f.Create,
		DestroyFunc: f.Destroy,
	}, actorpool.Config{MaxObjects: 8})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(context.Background())
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		l, err := p.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(); err != nil {
			b.Fatal(err)
		}
	}
}

// PuddleDirect takes and gives back with puddle's Acquire and Release.
func PuddleDirect(b *testing.B) {
	f := &pools.Factory{}
	p, err := puddle.NewPool(&puddle.Config[*pools.Object]{
		Constructor: f.Create,
		Destructor:  f.Destroy,
		MaxSize:     8,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r, err := p.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		r.Release()
	}
}

// SyncPoolDirect gets and puts with sync.Pool.
func SyncPoolDirect(b *testing.B) {
	f := &pools.Factory{}
	p := sync.Pool{New: func() any {
		o, _ := f.Create(context.Background())
		return o
	}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		o := p.Get().(*pools.Object)
		p.Put(o)
	}
}
