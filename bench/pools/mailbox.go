package pools

import (
	"context"
	"errors"
	"math/rand/v2"
)

// errMailboxClosed is what a take on a closed mailbox pool gets.
var errMailboxClosed = errors.New("pools: mailbox pool closed")

// mailboxPool is the original actor pool done plainly: one goroutine owns
// the idle objects, the waiting takers and the count of objects, and every
// take and every give-back is a message to its mailbox. A take sends a
// reply channel of its own (the original's future) and waits on it;
// creates run on goroutines of their own and post their result back.
// Idle objects are reused last in, first out; waiters are served first
// come, first served.
type mailboxPool struct {
	f    *Factory
	size int
	mbox chan mail
	done chan struct{}
}

type mailKind uint8

const (
	mailTake mailKind = iota
	mailGiveBack
	mailCreated
	mailClose
)

type mail struct {
	kind  mailKind
	reply chan taken // mailTake
	obj   *Object    // mailGiveBack, mailCreated
	err   error      // mailCreated
}

type taken struct {
	obj *Object
	err error
}

// mailboxCap is the mailbox's buffer. The original's mailbox is unbounded;
// a buffered channel this deep never fills in the benchmarks, where at most
// 1,024 takers and as many give-backs are in flight.
const mailboxCap = 2048

// NewMailbox returns a single-goroutine actor pool, written here from the
// description of the original actor pool.
func NewMailbox(cfg Config) (Pool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newMailbox(cfg.Factory, cfg.Size), nil
}

func newMailbox(f *Factory, size int) *mailboxPool {
	p := &mailboxPool{f: f, size: size, mbox: make(chan mail, mailboxCap), done: make(chan struct{})}
	go p.run()
	return p
}

// Do sends a take and waits for the reply, whatever ctx says once the take
// is sent: the original's waiters could not be withdrawn either.
func (p *mailboxPool) Do(ctx context.Context, fn func(*Object)) error {
	reply := make(chan taken, 1)
	select {
	case p.mbox <- mail{kind: mailTake, reply: reply}:
	case <-ctx.Done():
		return ctx.Err()
	}
	t := <-reply
	if t.err != nil {
		return t.err
	}
	fn(t.obj)
	p.mbox <- mail{kind: mailGiveBack, obj: t.obj}
	return nil
}

// Close destroys the idle objects, fails the waiters, waits for every lent
// object to come back and for the actor to end.
func (p *mailboxPool) Close() error {
	p.mbox <- mail{kind: mailClose}
	<-p.done
	return nil
}

func (p *mailboxPool) run() {
	defer close(p.done)
	var (
		idle    []*Object
		waiting []chan taken
		total   int // objects alive or being created
		closing bool
	)
	serve := func(o *Object) {
		switch {
		case closing:
			p.f.Destroy(o)
			total--
		case len(waiting) > 0:
			w := waiting[0]
			waiting = waiting[1:]
			w <- taken{obj: o}
		default:
			idle = append(idle, o)
		}
	}
	for m := range p.mbox {
		switch m.kind {
		case mailTake:
			switch {
			case closing:
				m.reply <- taken{err: errMailboxClosed}
			case len(idle) > 0:
				o := idle[len(idle)-1]
				idle = idle[:len(idle)-1]
				m.reply <- taken{obj: o}
			default:
				waiting = append(waiting, m.reply)
				if total < p.size {
					total++
					go p.create()
				}
			}
		case mailGiveBack:
			serve(m.obj)
		case mailCreated:
			if m.err != nil {
				total--
				if len(waiting) > 0 {
					waiting[0] <- taken{err: m.err}
					waiting = waiting[1:]
				}
				break
			}
			serve(m.obj)
		case mailClose:
			closing = true
			for _, o := range idle {
				p.f.Destroy(o)
				total--
			}
			idle = nil
			for _, w := range waiting {
				w <- taken{err: errMailboxClosed}
			}
			waiting = nil
		}
		if closing && total == 0 {
			return
		}
	}
}

func (p *mailboxPool) create() {
	o, err := p.f.Create(context.Background())
	p.mbox <- mail{kind: mailCreated, obj: o, err: err}
}

// partitionedPool is the original's workaround for its single actor: N
// mailbox pools, each with a share of the objects, and every take sent to
// one of them at random (the original picks by thread; Go has no thread to
// pick by). A taker waits on its partition even when another has objects
// idle.
type partitionedPool struct {
	parts []*mailboxPool
}

// Partitions is how many mailbox pools a partitioned mailbox pool splits
// its objects between, or fewer when the pool has fewer objects.
const Partitions = 4

// NewPartitionedMailbox returns Partitions mailbox pools sharing the size.
func NewPartitionedMailbox(cfg Config) (Pool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := min(Partitions, cfg.Size)
	p := &partitionedPool{parts: make([]*mailboxPool, n)}
	for i := range n {
		size := cfg.Size / n
		if i < cfg.Size%n {
			size++
		}
		p.parts[i] = newMailbox(cfg.Factory, size)
	}
	return p, nil
}

func (p *partitionedPool) Do(ctx context.Context, fn func(*Object)) error {
	return p.parts[rand.IntN(len(p.parts))].Do(ctx, fn)
}

func (p *partitionedPool) Close() error {
	for _, part := range p.parts {
		part.Close()
	}
	return nil
}
