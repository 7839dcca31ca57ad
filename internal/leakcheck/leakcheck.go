// Package leakcheck is the module's one check that a test leaves no
// goroutine behind: that nothing a test started, a pool's keeper or an
// actor's workers among them, outlives Close.
//
// A goroutine counts as left if it was not running when the check began
// (Take, or Check at the start of a test) and still runs when the check
// ends, after a bounded wait for goroutines that were told to end and have
// yet to return. The goroutine that checks is never counted, nor are the
// runtime's own. It uses the standard library only, so that the root
// package's tests, which package testenv cannot serve without an import
// cycle, use it too.
package leakcheck

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// wait bounds how long a check waits for goroutines to end: long enough
// for a goroutine told to end to return on a busy machine, short enough
// that a real leak fails the test soon.
const wait = 10 * time.Second

// Check fails t if a goroutine that was not running when Check was called
// still runs once t and the cleanups it registers after this call are
// done. Call it first in a test, so that its check runs last.
func Check(t testing.TB) {
	t.Helper()
	s := Take()
	t.Cleanup(func() { s.Check(t) })
}

// A Snapshot is the goroutines running at one moment.
type Snapshot struct{ ids map[uint64]bool }

// Take returns the goroutines running now.
func Take() Snapshot {
	s := Snapshot{ids: map[uint64]bool{}}
	for _, g := range stacks() {
		s.ids[g.id] = true
	}
	return s
}

// Started returns the stacks of the goroutines running now that were not
// running when s was taken, other than the caller's.
func (s Snapshot) Started() []string {
	var left []string
	// runtime.Stack lists the caller first.
	for _, g := range stacks()[1:] {
		if !s.ids[g.id] {
			left = append(left, g.stack)
		}
	}
	return left
}

// Left waits up to d for the goroutines started since s was taken, other
// than the caller, to end, and returns the stacks of those that still run.
func (s Snapshot) Left(d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		left := s.Started()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Check fails t if goroutines started since s was taken, other than the
// caller, still run after a bounded wait for them to end.
func (s Snapshot) Check(t testing.TB) {
	t.Helper()
	if left := s.Left(wait); len(left) > 0 {
		t.Errorf("%d goroutines started since the snapshot still run after waiting %v for them to end:\n\n%s",
			len(left), wait, strings.Join(left, "\n\n"))
	}
}

// Bubble returns the stacks of the goroutines in the caller's synctest
// bubble, other than the caller's, those of package synctest that run the
// bubble among them; it panics outside a bubble. A test in a bubble checks
// with it what still runs there once the code it tests says it has
// stopped, such as a goroutine that a timer started: the bubble sets the
// test's goroutines apart from those of the tests that run beside it.
func Bubble() []string {
	gs := stacks()
	bubble := gs[0].bubble
	if bubble == "" {
		panic("leakcheck: Bubble called outside a synctest bubble")
	}
	var in []string
	for _, g := range gs[1:] {
		if g.bubble == bubble {
			in = append(in, g.stack)
		}
	}
	return in
}

// A goroutine is one entry of runtime.Stack's dump.
type goroutine struct {
	id     uint64
	bubble string // the synctest bubble it belongs to, "" for none
	stack  string
}

// stacks returns every goroutine that runs code outside the runtime, the
// caller first.
func stacks() []goroutine {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var gs []goroutine
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		// Each entry begins "goroutine 123 [state]:", or, in a bubble,
		// "goroutine 123 [state, synctest bubble 4]:".
		head, _, _ := bytes.Cut(g, []byte("\n"))
		idText, state, _ := bytes.Cut(head, []byte(" ["))
		id, err := strconv.ParseUint(string(bytes.TrimPrefix(idText, []byte("goroutine "))), 10, 64)
		if err != nil {
			continue
		}
		_, bubble, _ := bytes.Cut(bytes.TrimSuffix(state, []byte("]:")), []byte(", synctest bubble "))
		gs = append(gs, goroutine{id: id, bubble: string(bubble), stack: string(g)})
	}
	return gs
}
