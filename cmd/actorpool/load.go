package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actorpool/actorpool"
)

var now = time.Now

// requestTimeout bounds each request, wait for a connection included, as a
// server bounds the requests it serves.
const requestTimeout = 2 * time.Second

// A load is what the clients did: counts and latencies, shared by the
// clients, the progress display and the summary.
type load struct {
	requests atomic.Uint64 // succeeded
	failed   atomic.Uint64
	sendFail atomic.Uint64 // audit tasks the actor refused
	wait     histogram     // waiting for a connection
	latency  histogram     // the whole request, wait included
	errs     errorLog
}

// client runs requests until ctx ends, sending an audit task for each.
func (l *load) client(ctx context.Context, id int, b backend, audit auditActor, think time.Duration) {
	r := rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))
	for ctx.Err() == nil {
		rq := request{client: id, user: r.IntN(numUsers), page: r.IntN(numPages)}
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		rq.start = now()
		err := b.request(rctx, &rq)
		end := now()
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return // stopped in the middle: not a failure
			}
			l.failed.Add(1)
			l.errs.add("request", err)
			continue
		}
		l.requests.Add(1)
		l.wait.record(rq.got.Sub(rq.start))
		l.latency.record(end.Sub(rq.start))
		err = audit.send(ctx, auditEvent{Client: id, User: rq.user, Page: rq.page, At: end})
		if err != nil && ctx.Err() == nil {
			l.sendFail.Add(1)
			l.errs.add("audit send", err)
		}
		if think > 0 {
			// Think times vary, as people's do: half to one and a half
			// times the mean.
			t := time.NewTimer(think/2 + time.Duration(r.Int64N(int64(think)+1)))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// An errorLog counts errors by message, keeping the first few kinds.
type errorLog struct {
	mu     sync.Mutex
	counts map[string]int
}

const maxErrorKinds = 10

func (e *errorLog) add(what string, err error) {
	msg := what + ": " + err.Error()
	var we *actorpool.WaitError
	if errors.As(err, &we) {
		// Wait errors differ by their numbers; group them by cause.
		msg = what + ": gave up waiting for a connection: " + we.Err.Error()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = map[string]int{}
	}
	if _, ok := e.counts[msg]; ok || len(e.counts) < maxErrorKinds {
		e.counts[msg]++
	}
}

// top returns the messages, most frequent first.
func (e *errorLog) top() []errorCount {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []errorCount
	for m, n := range e.counts {
		out = append(out, errorCount{m, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].msg < out[j].msg
	})
	return out
}

type errorCount struct {
	msg string
	n   int
}
