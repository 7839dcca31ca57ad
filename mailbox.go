package actorpool

import "sync"

// A mailbox carries messages to the actor. It never blocks a sender, the
// actor included, and never drops a message: it is a slice behind a mutex
// with a one-slot channel to wake the actor. Once closed, post reports
// false and the sender does the work itself.
type mailbox struct {
	mu     sync.Mutex
	msgs   []message
	spare  []message
	closed bool
	wake   chan struct{}
}

func (m *mailbox) init() { m.wake = make(chan struct{}, 1) }

func (m *mailbox) post(msg message) bool {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false
	}
	m.msgs = append(m.msgs, msg)
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
	return true
}

// take returns the messages posted since the last take. The slice is valid
// until the next take.
func (m *mailbox) take() []message {
	m.mu.Lock()
	msgs := m.msgs
	clear(m.spare)
	m.msgs, m.spare = m.spare[:0], msgs
	m.mu.Unlock()
	return msgs
}

// close stops the mailbox and returns what was posted but not taken.
func (m *mailbox) close() []message {
	m.mu.Lock()
	m.closed = true
	msgs := m.msgs
	m.msgs = nil
	m.mu.Unlock()
	return msgs
}
