package actor

import (
	"iter"
	"sync"
)

// A RingSink keeps the last dead letters in memory, for inspection, tests and
// Replay. When full, a new letter overwrites the oldest.
type RingSink[T any] struct {
	mu          sync.Mutex
	buf         []DeadLetter[T]
	head, n     int
	overwritten uint64
}

// NewRingSink returns a sink that keeps the last size letters. It panics if
// size < 1.
func NewRingSink[T any](size int) *RingSink[T] {
	if size < 1 {
		panic("actor: NewRingSink needs a size ≥ 1")
	}
	return &RingSink[T]{buf: make([]DeadLetter[T], size)}
}

// Put keeps l, overwriting the oldest letter if the ring is full. It never
// fails.
func (s *RingSink[T]) Put(l DeadLetter[T]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n < len(s.buf) {
		s.buf[(s.head+s.n)%len(s.buf)] = l
		s.n++
		return nil
	}
	s.buf[s.head] = l
	s.head = (s.head + 1) % len(s.buf)
	s.overwritten++
	return nil
}

// Letters yields the letters held when it is called, oldest first. Reading
// does not remove them; see Clear.
func (s *RingSink[T]) Letters() iter.Seq2[DeadLetter[T], error] {
	s.mu.Lock()
	snap := make([]DeadLetter[T], s.n)
	for i := range snap {
		snap[i] = s.buf[(s.head+i)%len(s.buf)]
	}
	s.mu.Unlock()
	return func(yield func(DeadLetter[T], error) bool) {
		for _, l := range snap {
			if !yield(l, nil) {
				return
			}
		}
	}
}

// Len returns how many letters the ring holds.
func (s *RingSink[T]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Overwritten returns how many letters were lost to newer ones.
func (s *RingSink[T]) Overwritten() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overwritten
}

// Clear removes every letter.
func (s *RingSink[T]) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.buf)
	s.head, s.n = 0, 0
}
