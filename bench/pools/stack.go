package pools

import (
	"context"
	"sync"
)

// stackPool is Ruby connection_pool's TimedStack as its description goes:
// one mutex guards a stack of idle objects and the count of objects made;
// a take pops the most recently given back object, or creates one while
// holding the mutex if the pool has room, or waits on a condition variable;
// a give-back pushes the object and wakes every waiter with a broadcast.
//
// Ruby's waits are timed; sync.Cond has no timed wait, so a take here waits
// until an object comes back, whatever its context says. The benchmarks
// never cancel a take.
type stackPool struct {
	f       *Factory
	size    int
	mu      sync.Mutex
	cond    sync.Cond
	idle    []*Object
	created int
}

// NewStack returns a mutex and condition-variable LIFO stack pool, written
// here from the description of Ruby connection_pool's TimedStack.
func NewStack(cfg Config) (Pool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p := &stackPool{f: cfg.Factory, size: cfg.Size, idle: make([]*Object, 0, cfg.Size)}
	p.cond.L = &p.mu
	return p, nil
}

func (p *stackPool) Do(ctx context.Context, fn func(*Object)) error {
	o, err := p.pop(ctx)
	if err != nil {
		return err
	}
	fn(o)
	p.push(o)
	return nil
}

func (p *stackPool) pop(ctx context.Context) (*Object, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if n := len(p.idle); n > 0 {
			o := p.idle[n-1]
			p.idle = p.idle[:n-1]
			return o, nil
		}
		if p.created < p.size {
			// Ruby creates under the lock too: a slow connect holds up
			// every take and give-back.
			o, err := p.f.Create(ctx)
			if err != nil {
				return nil, err
			}
			p.created++
			return o, nil
		}
		p.cond.Wait()
	}
}

func (p *stackPool) push(o *Object) {
	p.mu.Lock()
	p.idle = append(p.idle, o)
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *stackPool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, o := range p.idle {
		p.f.Destroy(o)
	}
	p.idle = p.idle[:0]
	return nil
}
