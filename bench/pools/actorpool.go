package pools

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/actorpool/actorpool"
)

type actorPool struct {
	p *actorpool.Pool[*Object]
}

// NewActorpool returns actorpool with MaxObjects set to the size and every
// other setting at its default: objects made on demand, reused last in,
// first out, and no housekeeping that the others do not do either.
func NewActorpool(cfg Config) (Pool, error) { return newActorpool(cfg, 0) }

// NewActorpoolBounded returns actorpool with bounded fairness: a running
// goroutine may take an object given back ahead of waiters that have waited
// less than a millisecond (Config.HandoffAfter).
func NewActorpoolBounded(cfg Config) (Pool, error) { return newActorpool(cfg, time.Millisecond) }

func newActorpool(cfg Config, handoffAfter time.Duration) (Pool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p, err := actorpool.New(actorpool.FactoryFuncs[*Object]{
		CreateFunc:  cfg.Factory.Create,
		DestroyFunc: cfg.Factory.Destroy,
	}, actorpool.Config{
		Name:         "bench",
		MaxObjects:   cfg.Size,
		HandoffAfter: handoffAfter,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	return &actorPool{p: p}, nil
}

func (a *actorPool) Do(ctx context.Context, fn func(*Object)) error {
	l, err := a.p.Acquire(ctx)
	if err != nil {
		return err
	}
	fn(l.Value())
	return l.Release()
}

func (a *actorPool) Close() error { return a.p.Close(context.Background()) }
