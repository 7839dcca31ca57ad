package pools

import (
	"context"
	"sync/atomic"
	"time"
)

// An Object is what the pools lend: a stand-in for a connection, which
// knows who holds it so that Check can catch a pool lending it twice.
type Object struct {
	// ID is unique within the Factory that made the object.
	ID        int64
	holders   atomic.Int32
	destroyed atomic.Bool
}

// A Factory makes and destroys Objects and counts them. Its zero value
// creates objects at once.
type Factory struct {
	// CreateDelay is how long each Create takes: a stand-in for a connect.
	CreateDelay time.Duration

	nextID         atomic.Int64
	created        atomic.Int64
	destroyed      atomic.Int64
	doubleDestroys atomic.Int64
	alive          atomic.Int64 // counting objects being created
	maxAlive       atomic.Int64
	longestCreate  atomic.Int64 // nanoseconds
}

// Create makes an object, taking CreateDelay to do so. It fails only when
// ctx ends first.
func (f *Factory) Create(ctx context.Context) (*Object, error) {
	n := f.alive.Add(1)
	for {
		m := f.maxAlive.Load()
		if n <= m || f.maxAlive.CompareAndSwap(m, n) {
			break
		}
	}
	if f.CreateDelay > 0 {
		start := time.Now()
		t := time.NewTimer(f.CreateDelay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			f.alive.Add(-1)
			return nil, ctx.Err()
		}
		took := int64(time.Since(start))
		for {
			m := f.longestCreate.Load()
			if took <= m || f.longestCreate.CompareAndSwap(m, took) {
				break
			}
		}
	}
	f.created.Add(1)
	return &Object{ID: f.nextID.Add(1)}, nil
}

// Destroy destroys o. Destroying an object twice is counted, for Check.
func (f *Factory) Destroy(o *Object) {
	if o.destroyed.Swap(true) {
		f.doubleDestroys.Add(1)
		return
	}
	f.destroyed.Add(1)
	f.alive.Add(-1)
}

// Created returns how many objects the factory has made.
func (f *Factory) Created() int64 { return f.created.Load() }

// Destroyed returns how many objects the factory has destroyed.
func (f *Factory) Destroyed() int64 { return f.destroyed.Load() }

// MaxAlive returns the most objects that were alive, or being created, at
// once.
func (f *Factory) MaxAlive() int64 { return f.maxAlive.Load() }

// LongestCreate returns how long the slowest Create took, waiting
// included: the floor under the time to fill a pool whose creates all run
// in parallel.
func (f *Factory) LongestCreate() time.Duration { return time.Duration(f.longestCreate.Load()) }
