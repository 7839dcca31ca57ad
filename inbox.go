package actorpool

import "sync"

// An inbox carries messages to the keeper. It never blocks a sender, the
// keeper included, and never loses a message: it is a slice behind a mutex
// with a one-slot channel to wake the keeper. Once closed, post reports
// false and the sender does the work itself.
type inbox struct {
	mu     sync.Mutex
	msgs   []message
	spare  []message
	closed bool
	wake   chan struct{}
}

func (m *inbox) init() { m.wake = make(chan struct{}, 1) }

func (m *inbox) post(msg message) bool {
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
func (m *inbox) take() []message {
	m.mu.Lock()
	msgs := m.msgs
	clear(m.spare)
	m.msgs, m.spare = m.spare[:0], msgs
	m.mu.Unlock()
	return msgs
}

// close stops the inbox and returns what was posted but not taken.
func (m *inbox) close() []message {
	m.mu.Lock()
	m.closed = true
	msgs := m.msgs
	m.msgs = nil
	m.mu.Unlock()
	return msgs
}
