package actor

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// How a FileSink moves letters out (see Move). A letter leaves the file in
// two steps, each durable before the next begins:
//
//  1. Once the actor has ended the letter's task, a record
//     {"moved":"<hash>"} is appended and the file synced. The hash is the
//     first 16 bytes of the SHA-256 of the letter's line, and the record
//     hides the first line before it with that hash, not hidden already,
//     from every reading. Because a record names a line by its content,
//     not its place, mending another line by hand does not make it hide
//     the wrong letter.
//  2. When the replay ends, the file is rewritten without the letters
//     moved and their records: to a new file beside it, synced, renamed
//     over the old one, and the directory synced. The rename is the
//     rewrite's one step, so a crash leaves the old file, whose records
//     still hide what was moved, or the new one, which has neither.
//
// The only letter a crash can send twice is the one whose task ended after
// the last record was synced: replayed, not yet recorded as moved.

// Fault points of a replay, where tests kill the process to check that a
// crash loses no letter and sends at most one twice. replayFaultHook is nil
// outside tests.
const (
	pointTaken     = "taken"     // a letter's task ended; it is not recorded as moved yet
	pointRecorded  = "recorded"  // a letter is recorded as moved; the next is not sent yet
	pointRewritten = "rewritten" // the rewrite is synced under its temporary name
	pointRenamed   = "renamed"   // the rewrite has replaced the file
)

var replayFaultHook func(point string)

func replayFault(point string) {
	if replayFaultHook != nil {
		replayFaultHook(point)
	}
}

// A Mover is a [Source] whose letters a replay moves out rather than
// copies: [Actor.Replay] takes each letter out of it once the actor has
// ended the letter's task, so that a later replay does not send it again.
// FileSink is one.
type Mover[T any] interface {
	Source[T]
	// Move offers take the letters that Letters would yield, in order, each
	// with nil, and each line it cannot read as a letter with a
	// *LineError. A letter for which take returns true leaves the store for
	// good before Move offers the next; the others, and the lines that
	// hold no letter, stay. Move stops when take returns an error, and
	// returns it with those of its own.
	Move(take func(DeadLetter[T], error) (bool, error)) error
}

// Move offers take the letters of the file as Mover says: a letter that
// take takes is recorded as moved, durably, before the next is offered.
// When Move returns, the file holds the letters not taken, the lines that
// hold no letter, untouched and in their order, and the letters put
// meanwhile; it has been rewritten if anything was moved, unless the sink
// was closed meanwhile, in which case the records of what was moved stay in
// it and hide those letters until a later Move rewrites it.
//
// A crash of the process (kill -9) at any point loses no letter of the
// file, nor does a power loss lose one that was on disk. It can leave in
// the file at most one letter that take took: the one taken after the last
// record was synced. A later replay sends that one again.
//
// One Move at a time runs on a sink; another fails at once.
func (s *FileSink[T]) Move(take func(DeadLetter[T], error) (bool, error)) error {
	if !s.moving.CompareAndSwap(false, true) {
		return fmt.Errorf("actor: dead-letter file %s: another replay is moving its letters", s.path)
	}
	defer s.moving.Store(false)
	// A closed sink cannot record a letter as moved: each letter taken
	// would stay in the file, and run again on the next replay.
	s.mu.Lock()
	closed := s.f == nil
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("actor: replay dead letters: %s: %w", s.path, os.ErrClosed)
	}
	f, end, err := s.snapshot()
	if err != nil {
		return fmt.Errorf("actor: replay dead letters: %w", err)
	}
	defer f.Close()
	moved := 0
	var stop error
	err = s.read(f, end, func(l DeadLetter[T], ln *fileLine, lerr error) bool {
		taken, err := take(l, lerr)
		if taken && lerr == nil {
			replayFault(pointTaken)
			if rerr := s.recordMoved(ln); rerr != nil {
				stop = errors.Join(err, rerr)
				return false
			}
			moved++
			replayFault(pointRecorded)
		}
		stop = err
		return err == nil
	})
	if err != nil {
		err = fmt.Errorf("actor: replay dead letters from %s: %w", s.path, err)
	}
	return errors.Join(stop, err, s.rewrite(moved > 0))
}

// recordMoved appends the record that hides ln, and syncs the file.
func (s *FileSink[T]) recordMoved(ln *fileLine) error {
	sum := sha256.Sum256(ln.data)
	rec := make([]byte, 0, movedLen+1)
	rec = append(rec, movedPrefix...)
	rec = hex.AppendEncode(rec, sum[:movedHash])
	rec = append(rec, movedSuffix...)
	rec = append(rec, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	err := os.ErrClosed
	if s.f != nil {
		err = s.appendLocked(rec)
		if err == nil {
			err = s.f.Sync()
		}
	}
	if err != nil {
		return fmt.Errorf("actor: dead-letter file %s: the letter on line %d was replayed, but recording it as moved failed, so a later replay sends it again: %w",
			s.path, ln.n, err)
	}
	return nil
}

// The form of a moved record: {"moved":"<32 hex digits>"}.
const (
	movedPrefix = `{"moved":"`
	movedSuffix = `"}`
	movedHash   = 16 // bytes of the SHA-256 kept
	movedLen    = len(movedPrefix) + 2*movedHash + len(movedSuffix)
)

// movedRecord returns the hash that ln records as moved, if ln is a moved
// record.
func movedRecord(ln *fileLine) ([movedHash]byte, bool) {
	var h [movedHash]byte
	d := ln.data
	if len(d) != movedLen || !bytes.HasPrefix(d, []byte(movedPrefix)) || !bytes.HasSuffix(d, []byte(movedSuffix)) {
		return h, false
	}
	digits := d[len(movedPrefix) : len(d)-len(movedSuffix)]
	if bytes.ContainsFunc(digits, notHex) {
		return h, false
	}
	hex.Decode(h[:], digits)
	return h, true
}

// A movedSet holds the moved records of a file: for each hash, where its
// records are, in the order of the file.
type movedSet map[[movedHash]byte][]int64

// movedRecords reads the moved records r holds.
func movedRecords(r io.Reader) (movedSet, error) {
	m := movedSet{}
	err := scanLines(r, func(ln *fileLine) bool {
		if h, ok := movedRecord(ln); ok {
			m[h] = append(m[h], ln.off)
		}
		return true
	})
	return m, err
}

// hides reports whether a record hides ln, the lines before it having been
// passed to hides in order: the first record after ln with ln's hash that
// hides no earlier line. A record cannot hide a line written after it.
func (m movedSet) hides(ln *fileLine) bool {
	if len(m) == 0 || ln.long || ln.cut {
		return false
	}
	sum := sha256.Sum256(ln.data)
	h := [movedHash]byte(sum[:movedHash])
	at := m[h]
	for len(at) > 0 && at[0] < ln.off {
		at = at[1:]
	}
	if len(at) == 0 {
		return false
	}
	m[h] = at[1:]
	return true
}

// rewrite rewrites the file without the letters moved and their records,
// if it holds any records: always when moved says this replay moved some,
// else only if a reading finds records left by one that crashed or was
// closed. It holds the mutex throughout, so that no letter is put to the
// file being replaced.
func (s *FileSink[T]) rewrite(moved bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil // closed: the records go on hiding what was moved
	}
	fail := func(err error) error {
		return fmt.Errorf("actor: rewrite dead-letter file %s without the letters replayed (their records hide them meanwhile): %w", s.path, err)
	}
	info, err := s.f.Stat()
	if err != nil {
		return fail(err)
	}
	end := info.Size()
	records, err := movedRecords(io.NewSectionReader(s.f, 0, end))
	if err != nil {
		return fail(err)
	}
	if len(records) == 0 && !moved {
		return nil
	}
	// The spans to leave out: the records, and the lines they hide.
	type span struct{ off, size int64 }
	var drop []span
	err = scanLines(io.NewSectionReader(s.f, 0, end), func(ln *fileLine) bool {
		if _, ok := movedRecord(ln); ok || records.hides(ln) {
			drop = append(drop, span{ln.off, ln.size})
		}
		return true
	})
	if err != nil {
		return fail(err)
	}
	if len(drop) == 0 {
		return nil
	}
	removeStale(s.path)
	tmp, err := createBeside(s.path, info.Mode().Perm())
	if err != nil {
		return fail(err)
	}
	keep := false
	defer func() {
		if !keep {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 64<<10)
	from := int64(0)
	for _, d := range append(drop, span{end, 0}) {
		if _, err := io.Copy(w, io.NewSectionReader(s.f, from, d.off-from)); err != nil {
			return fail(err)
		}
		from = d.off + d.size
	}
	if err := errors.Join(w.Flush(), tmp.Sync()); err != nil {
		return fail(err)
	}
	if err := lockFile(tmp); err != nil {
		return fail(err)
	}
	replayFault(pointRewritten)
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fail(err)
	}
	keep = true
	replayFault(pointRenamed)
	old := s.f
	s.f = tmp
	old.Close()
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		return fmt.Errorf("actor: rewrite dead-letter file %s: the rewrite replaced it, but syncing its directory failed, so a power loss may bring the old one back, whose records hide what was replayed: %w", s.path, err)
	}
	return nil
}

// rewritePrefix starts the names of the temporary files of a rewrite of
// path, which end with 16 hex digits.
func rewritePrefix(path string) string { return filepath.Base(path) + ".rewrite-" }

// createBeside creates a new file for appending beside path, named by
// rewritePrefix, with mode perm.
func createBeside(path string, perm os.FileMode) (*os.File, error) {
	var suffix [8]byte
	for {
		rand.Read(suffix[:])
		name := filepath.Join(filepath.Dir(path), rewritePrefix(path)+hex.EncodeToString(suffix[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := f.Chmod(perm); err != nil { // past the umask
			f.Close()
			os.Remove(name)
			return nil, err
		}
		return f, nil
	}
}

// removeStale removes what rewrites of path that crashed left behind. The
// sink's lock on path keeps other sinks from rewriting it meanwhile.
func removeStale(path string) {
	dir := filepath.Dir(path)
	entries, _ := os.ReadDir(dir)
	prefix := rewritePrefix(path)
	for _, e := range entries {
		name := e.Name()
		if digits, ok := strings.CutPrefix(name, prefix); ok && len(digits) == 16 && !strings.ContainsFunc(digits, notHex) {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

func notHex(r rune) bool { return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') }

// syncDir syncs the directory dir, so that a rename in it survives a power
// loss.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
