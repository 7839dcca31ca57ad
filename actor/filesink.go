package actor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"sync"
	"sync/atomic"
)

// A FileSink appends dead letters to a file as JSON lines, one letter per
// line in the form of [DeadLetter.MarshalJSON], so that they outlive the
// process and can be replayed after a restart. The payload type must encode
// and decode with encoding/json.
//
// Each letter is one write(2) to a file opened for appending; it is not
// synced to disk until Close. A letter may encode to at most 16 MiB.
//
// A line that holds no letter — it no longer decodes because the payload
// type changed between deploys, someone edited it, or a crash or a full
// disk cut it short while it was written — costs that line only: reading reports it as a
// [*LineError], with its number, the error and its bytes, and goes on.
//
// A FileSink is a [Mover]: [Actor.Replay] moves its letters into an actor
// rather than copying them. While a replay runs, the file also holds a line
// {"moved":"<hash>"} for each letter replayed, which hides that letter from
// every later reading; when the replay ends, the file is rewritten without
// the letters moved and those lines. See [FileSink.Move].
//
// A file takes one FileSink at a time, since a replay rewrites it: on
// Linux, macOS and the BSDs, OpenFileSink fails while another FileSink, in
// this process or another, has the file open. Share one FileSink between
// the actors that write to the same file.
type FileSink[T any] struct {
	path   string
	mu     sync.Mutex // serializes writes to f and its replacement
	f      *os.File   // nil once closed
	cut    bool       // a write failed, maybe partway: the file may end inside a line
	moving atomic.Bool

	writeFile func(f *os.File, b []byte) (int, error) // f.Write, unless a test fails it
}

// maxLine is the longest line, without its newline, that a dead-letter file
// holds: Put refuses a letter that encodes longer, and reading reports a
// longer line as one that holds no letter, without holding all of it in
// memory.
const maxLine = 16 << 20

// OpenFileSink opens, or creates with mode 0600, the file at path for
// appending letters. A last line without its newline, cut short by a crash
// while it was written, is ended with one, so that it stays a line of its
// own and the next letter starts a line; reading reports it.
func OpenFileSink[T any](path string) (*FileSink[T], error) {
	f, err := openLocked(path)
	if err != nil {
		return nil, fmt.Errorf("actor: open dead-letter file: %w", err)
	}
	if err := endLastLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("actor: open dead-letter file %s: %w", path, err)
	}
	return &FileSink[T]{path: path, f: f}, nil
}

// endLastLine appends a newline to f if it ends without one.
func endLastLine(f *os.File) error {
	info, err := f.Stat()
	if err != nil || info.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, info.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	_, err = f.Write([]byte{'\n'})
	return err
}

// Path returns the path of the file.
func (s *FileSink[T]) Path() string { return s.path }

// Put appends l as one line.
func (s *FileSink[T]) Put(l DeadLetter[T]) error {
	line, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("actor: encode dead letter of task %d (%s): %w", l.Task.ID, l.Task.Type, err)
	}
	if len(line) > maxLine {
		return fmt.Errorf("actor: dead letter of task %d (%s) encodes to %d bytes, more than the %d a line of a dead-letter file may hold",
			l.Task.ID, l.Task.Type, len(line), maxLine)
	}
	line = append(line, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return fmt.Errorf("actor: dead-letter file %s: %w", s.path, os.ErrClosed)
	}
	if err := s.appendLocked(line); err != nil {
		return fmt.Errorf("actor: write dead letter of task %d (%s): %w", l.Task.ID, l.Task.Type, err)
	}
	return nil
}

// appendLocked appends b, whole lines, to the open file. A write that
// failed may have written part of its line (the disk filled up): the next
// append first ends that line, so that it costs only itself, reported when
// read, and the next line is whole.
func (s *FileSink[T]) appendLocked(b []byte) error {
	if s.cut {
		if err := endLastLine(s.f); err != nil {
			return err
		}
		s.cut = false
	}
	write := (*os.File).Write
	if s.writeFile != nil {
		write = s.writeFile
	}
	if _, err := write(s.f, b); err != nil {
		s.cut = true
		return err
	}
	return nil
}

// Letters yields the letters the file holds when Letters is called, first
// written first, leaving out those a replay has moved. Letters put while it
// reads are left for the next reading, so that replaying into an actor that
// writes its failures to the same file ends. A line that holds no letter is
// yielded as a [*LineError], and the reading goes on; an error that is not
// a *LineError, such as a file that cannot be read, ends it.
func (s *FileSink[T]) Letters() iter.Seq2[DeadLetter[T], error] {
	return func(yield func(DeadLetter[T], error) bool) {
		f, end, err := s.snapshot()
		if err != nil {
			yield(DeadLetter[T]{}, fmt.Errorf("actor: read dead letters: %w", err))
			return
		}
		defer f.Close()
		err = s.read(f, end, func(l DeadLetter[T], _ *fileLine, err error) bool { return yield(l, err) })
		if err != nil {
			yield(DeadLetter[T]{}, fmt.Errorf("actor: read dead letters from %s: %w", s.path, err))
		}
	}
}

// snapshot opens the file for reading and returns it with its size, both
// read under the mutex, so that the size falls between two lines this sink
// wrote and the file is the one it writes to. Letters the sink writes
// later are past that size; a replacement of the file by a replay's
// rewrite leaves the returned one as it was.
func (s *FileSink[T]) snapshot() (*os.File, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.Open(s.path)
	if err != nil {
		return nil, 0, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, info.Size(), nil
}

// read calls fn for each line of the first end bytes of f that is not a
// moved record, nor a letter one hides: with the letter, or with a
// *LineError. It stops when fn returns false, and returns an error that
// stopped the reading.
func (s *FileSink[T]) read(f *os.File, end int64, fn func(DeadLetter[T], *fileLine, error) bool) error {
	moved, err := movedRecords(io.NewSectionReader(f, 0, end))
	if err != nil {
		return err
	}
	return scanLines(io.NewSectionReader(f, 0, end), func(ln *fileLine) bool {
		if _, ok := movedRecord(ln); ok || moved.hides(ln) {
			return true
		}
		l, err := s.decode(ln)
		return fn(l, ln, err)
	})
}

// decode returns the letter line ln holds, or a *LineError.
func (s *FileSink[T]) decode(ln *fileLine) (DeadLetter[T], error) {
	var l DeadLetter[T]
	var err error
	switch {
	case ln.long:
		err = fmt.Errorf("the line is %d bytes long, more than the %d a letter may take", ln.size, maxLine)
	case ln.cut:
		err = fmt.Errorf("the last line has no newline: a crash cut it short while it was written: %w", io.ErrUnexpectedEOF)
	default:
		err = json.Unmarshal(ln.data, &l)
	}
	if err != nil {
		return DeadLetter[T]{}, &LineError{Path: s.path, Line: ln.n, Raw: clone(ln.data), Err: err}
	}
	return l, nil
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// Close flushes the file to disk and closes it; later Puts fail, and so
// does a replay that is moving letters out of it, leaving the letter it was
// moving in the file. A later replay fails before it sends a letter.
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

// A LineError is a line of a dead-letter file that holds no letter: it
// does not decode as one, it is too long, or a crash cut it short. Reading
// goes on past it, and a replay leaves it in the file, where it can be
// mended by hand and replayed again.
type LineError struct {
	Path string // the file
	Line int    // the line's number, from 1
	Raw  []byte // the line, without its newline; only its first 16 MiB if longer
	Err  error  // why it holds no letter
}

// Error names the file, the line and what is wrong with it, but not the
// line's content, which may be long or private: that is in Raw.
func (e *LineError) Error() string {
	return fmt.Sprintf("actor: dead-letter file %s:%d holds no letter: %v", e.Path, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }
