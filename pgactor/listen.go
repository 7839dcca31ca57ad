package pgactor

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/actorpool/actorpool/pgpool"
	"github.com/jackc/pgx/v5"
)

// A listener holds one connection, outside the pool, in LISTEN on a
// schema's channel, and wakes the pumps of the process's actors that a
// notification names. The actors of one pool and schema in a process share
// it; it ends with the last of them.
type listener struct {
	key    listenerKey
	cc     *pgx.ConnConfig
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{} // actor name → its pumps' wake channels
}

type listenerKey struct {
	pool    *pgpool.Pool
	channel string
}

var listeners = struct {
	mu sync.Mutex
	m  map[listenerKey]*listener
}{m: make(map[listenerKey]*listener)}

// subscribe has wake signalled whenever a notification names the actor on
// channel, and once after each (re)connection, since notifications may
// have been missed meanwhile. It returns the function that ends the
// subscription.
func subscribe(pool *pgpool.Pool, channel, name string, wake chan struct{}, log *slog.Logger) func() {
	key := listenerKey{pool, channel}
	listeners.mu.Lock()
	l := listeners.m[key]
	if l == nil {
		ctx, cancel := context.WithCancel(context.Background())
		l = &listener{key: key, cc: pool.Config().ConnConfig.Copy(), log: log, cancel: cancel,
			done: make(chan struct{}), subs: make(map[string]map[chan struct{}]struct{})}
		listeners.m[key] = l
		go l.run(ctx)
	}
	l.mu.Lock()
	if l.subs[name] == nil {
		l.subs[name] = make(map[chan struct{}]struct{})
	}
	l.subs[name][wake] = struct{}{}
	l.mu.Unlock()
	listeners.mu.Unlock()
	return func() {
		listeners.mu.Lock()
		l.mu.Lock()
		delete(l.subs[name], wake)
		if len(l.subs[name]) == 0 {
			delete(l.subs, name)
		}
		last := len(l.subs) == 0
		l.mu.Unlock()
		if last {
			delete(listeners.m, key)
		}
		listeners.mu.Unlock()
		if last {
			l.cancel()
			<-l.done
		}
	}
}

// run connects, listens and dispatches until ctx ends, reconnecting with a
// growing delay when the connection fails.
func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	delay := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		l.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: LISTEN connection failed; workers poll meanwhile",
			slog.String("channel", l.key.channel), slog.Duration("retry_in", delay), slog.Any("error", err))
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// listen runs one connection until it fails or ctx ends.
func (l *listener) listen(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.cc)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if err := (&store{channel: l.key.channel}).listen(ctx, conn); err != nil {
		return err
	}
	l.wakeAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.mu.Lock()
		for wake := range l.subs[n.Payload] {
			nudge(wake)
		}
		l.mu.Unlock()
	}
}

func (l *listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, subs := range l.subs {
		for wake := range subs {
			nudge(wake)
		}
	}
}
