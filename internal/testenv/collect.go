package testenv

import (
	"bytes"
	"sync"

	"github.com/actorpool/actorpool/actor"
)

// A LockedBuffer is a bytes.Buffer that a test reads while the code it
// tests writes to it from other goroutines: a logger's output, or a child
// process's.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p to the buffer.
func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TaskErrors collects the failures that a durable actor's Config.OnError
// receives; its Add is such an OnError.
type TaskErrors struct {
	mu   sync.Mutex
	errs []*actor.TaskError
}

// Add records e.
func (l *TaskErrors) Add(e *actor.TaskError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, e)
}

// All returns the failures recorded so far, in order.
func (l *TaskErrors) All() []*actor.TaskError {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*actor.TaskError(nil), l.errs...)
}
