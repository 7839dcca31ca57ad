package actor

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"sync"
)

// A FileSink appends dead letters to a file as JSON lines, one letter per
// line in the form of [DeadLetter.MarshalJSON], so that they outlive the
// process and can be replayed after a restart. The payload type must encode
// and decode with encoding/json.
//
// Each letter is one write(2) to a file opened for appending; it is not
// synced to disk until Close.
type FileSink[T any] struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// OpenFileSink opens, or creates with mode 0600, the file at path for
// appending letters.
func OpenFileSink[T any](path string) (*FileSink[T], error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("actor: open dead-letter file: %w", err)
	}
	return &FileSink[T]{path: path, f: f}, nil
}

// Put appends l as one line.
func (s *FileSink[T]) Put(l DeadLetter[T]) error {
	line, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("actor: encode dead letter of task %d (%s): %w", l.Task.ID, l.Task.Type, err)
	}
	line = append(line, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return fmt.Errorf("actor: dead-letter file %s: %w", s.path, os.ErrClosed)
	}
	if _, err := s.f.Write(line); err != nil {
		return fmt.Errorf("actor: write dead letter of task %d (%s): %w", l.Task.ID, l.Task.Type, err)
	}
	return nil
}

// Letters yields the letters the file holds when Letters is called, first
// written first. Letters put while it reads are left for the next reading, so
// that replaying into an actor that writes its failures to the same file
// ends. A line that does not decode stops the reading with an error that
// gives its number.
func (s *FileSink[T]) Letters() iter.Seq2[DeadLetter[T], error] {
	return func(yield func(DeadLetter[T], error) bool) {
		f, err := os.Open(s.path)
		if err != nil {
			yield(DeadLetter[T]{}, fmt.Errorf("actor: read dead letters: %w", err))
			return
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			yield(DeadLetter[T]{}, fmt.Errorf("actor: read dead letters: %w", err))
			return
		}
		r := bufio.NewReader(io.LimitReader(f, info.Size()))
		for n := 1; ; n++ {
			line, err := r.ReadBytes('\n')
			if err == nil {
				var l DeadLetter[T]
				err = json.Unmarshal(line, &l)
				if err == nil {
					if !yield(l, nil) {
						return
					}
					continue
				}
			} else if err == io.EOF {
				if len(line) == 0 {
					return
				}
				err = io.ErrUnexpectedEOF // a last line cut short by a crash
			}
			yield(DeadLetter[T]{}, fmt.Errorf("actor: read dead letters: %s:%d: %w", s.path, n, err))
			return
		}
	}
}

// Close flushes the file to disk and closes it; later Puts fail.
func (s *FileSink[T]) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	f := s.f
	s.f = nil
	return errors.Join(f.Sync(), f.Close())
}
