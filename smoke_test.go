package actorpool

import (
	"context"
	"sync"
	"testing"
)

func TestSmoke(t *testing.T) {
	var n int
	var mu sync.Mutex
	p, err := New(FactoryFuncs[*int]{CreateFunc: func(context.Context) (*int, error) { mu.Lock(); n++; v := n; mu.Unlock(); return &v, nil }}, Config{MaxObjects: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				l, err := p.Acquire(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if err := l.Release(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%+v", p.Stats())
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", p.Stats())
}

func BenchmarkSmoke(b *testing.B) {
	p, _ := New(FactoryFuncs[*int]{CreateFunc: func(context.Context) (*int, error) { v := 1; return &v, nil }}, Config{MaxObjects: 4})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l, _ := p.Acquire(ctx)
		l.Release()
	}
	p.Close(ctx)
}
