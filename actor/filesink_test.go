package actor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// counter is a payload whose type the "next deploy" below changes.
type counter struct{ N int }

// line returns the line a FileSink writes for a letter with payload p.
func line[T any](t testing.TB, p T) string {
	t.Helper()
	b, err := json.Marshal(DeadLetter[T]{Actor: "audit", Reason: ReasonMaxAttempts, Task: Task[T]{ID: 1, Type: "count", Payload: p}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readAll returns the payloads and the line errors that s yields, failing t
// on another error.
func readAll[T any](t testing.TB, s Source[T]) ([]T, []*LineError) {
	t.Helper()
	var ps []T
	var bad []*LineError
	for l, err := range s.Letters() {
		var le *LineError
		switch {
		case errors.As(err, &le):
			bad = append(bad, le)
		case err != nil:
			t.Fatal(err)
		default:
			ps = append(ps, l.Task.Payload)
		}
	}
	return ps, bad
}

// openSink writes content to a new file and opens a FileSink on it, closed
// when the test ends.
func openSink[T any](t testing.TB, content string) *FileSink[T] {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenFileSink[T](path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestFileSinkBadLineInTheMiddle is the incident: a good letter, a line
// whose payload no longer decodes (an int field written as a string), and
// another good letter. Reading yields both letters and reports the line;
// a replay sends both and leaves the line in the file, as it was.
func TestFileSinkBadLineInTheMiddle(t *testing.T) {
	noLeaks(t)
	bad := line(t, map[string]string{"N": "oops"})
	s := openSink[counter](t, line(t, counter{1})+"\n"+bad+"\n"+line(t, counter{3})+"\n")
	got, errs := readAll(t, s)
	if !slices.Equal(got, []counter{{1}, {3}}) {
		t.Errorf("read %v, want [{1} {3}]", got)
	}
	if len(errs) != 1 {
		t.Fatalf("%d line errors, want 1: %v", len(errs), errs)
	}
	le := errs[0]
	if le.Line != 2 || le.Path != s.Path() || string(le.Raw) != bad || !strings.Contains(le.Err.Error(), "payload.N of type int") ||
		!strings.Contains(le.Error(), "dead.jsonl:2 holds no letter") {
		t.Errorf("line error %+v (%v)", le, le)
	}

	var ran record[int]
	a := newActor(t, "count", func(_ context.Context, task Task[counter]) error {
		ran.add(task.Payload.N)
		return nil
	}, Config[counter]{})
	n, err := a.Replay(t.Context(), s)
	var re *ReplayError
	if n != 2 || !errors.As(err, &re) || re.Err != nil || len(re.Unreadable) != 1 || re.Unreadable[0].Line != 2 ||
		!strings.Contains(err.Error(), "1 line holds no letter") || !strings.Contains(err.Error(), "dead.jsonl:2 (") {
		t.Fatalf("Replay = %d, %v; want 2 and a ReplayError naming line 2", n, err)
	}
	if got := ran.get(); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("the handler saw %v, want [1 3]", got)
	}
	if raw, _ := os.ReadFile(s.Path()); string(raw) != bad+"\n" {
		t.Errorf("after the replay the file holds %q, want the bad line alone", raw)
	}
	a.Close(t.Context())
}

// TestFileSinkLines reads files with lines of every kind: each line that
// holds no letter is reported with its number and the reading goes on.
func TestFileSinkLines(t *testing.T) {
	noLeaks(t)
	good := line(t, 1)
	long := `{"actor":"` + strings.Repeat("x", maxLine) + `"}`
	tests := []struct {
		name    string
		content string
		want    []int
		bad     map[int]string // line → in its error
	}{
		{"empty", "", nil, nil},
		{"good", good + "\n" + good + "\n", []int{1, 1}, nil},
		{"garbage on line 2", good + "\n{oops\n" + good + "\n", []int{1, 1}, map[int]string{2: "invalid character 'o'"}},
		{"blank line", good + "\n\n" + good + "\n", []int{1, 1}, map[int]string{2: "unexpected end of JSON input"}},
		{"unknown reason", good + "\n" + `{"reason":"bored"}` + "\n" + good + "\n", []int{1, 1}, map[int]string{2: `unknown dead-letter reason "bored"; want one of "closed", "drain deadline"`}},
		{"payload of another type", line(t, "one") + "\n" + good + "\n", []int{1}, map[int]string{1: "cannot unmarshal string"}},
		{"too long", good + "\n" + long + "\n" + good + "\n", []int{1, 1}, map[int]string{2: "more than the 16777216"}},
		{"not a letter", "{}\nnull\n" + `{"reason":"dropped"}` + "\n" + good + "\n", []int{1},
			map[int]string{1: `no "reason"`, 2: `no "reason"`, 3: `no "task"`}},
		{"every line bad", "a\nb\nc\n", nil, map[int]string{1: "invalid", 2: "invalid", 3: "invalid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openSink[int](t, tt.content)
			got, errs := readAll(t, s)
			if !slices.Equal(got, tt.want) {
				t.Errorf("read %v, want %v", got, tt.want)
			}
			if len(errs) != len(tt.bad) {
				t.Fatalf("%d line errors, want %d: %v", len(errs), len(tt.bad), errs)
			}
			lines := strings.Split(tt.content, "\n")
			for _, le := range errs {
				want, ok := tt.bad[le.Line]
				if !ok || !strings.Contains(le.Error(), want) || !strings.Contains(le.Error(), fmt.Sprintf("dead.jsonl:%d", le.Line)) {
					t.Errorf("line error %v, want one for line %d with %q", le, le.Line, want)
				}
				if raw := lines[le.Line-1]; !strings.HasPrefix(raw, string(le.Raw)) || (len(raw) <= maxLine && raw != string(le.Raw)) {
					t.Errorf("line %d: Raw is %d bytes, not the line's", le.Line, len(le.Raw))
				}
			}
		})
	}
}

// TestFileSinkCutLastLine: a crash cut the last letter short. Reading
// reports it, and a sink opened on the file starts its first letter on a
// line of its own, so that the cut line costs itself only.
func TestFileSinkCutLastLine(t *testing.T) {
	noLeaks(t)
	good := line(t, 1)
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	os.WriteFile(path, []byte(good+"\n"+good[:20]), 0o600)
	s, err := OpenFileSink[int](path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Put(DeadLetter[int]{Reason: ReasonDropped, Task: Task[int]{Payload: 2}}); err != nil {
		t.Fatal(err)
	}
	got, errs := readAll(t, s)
	if !slices.Equal(got, []int{1, 2}) || len(errs) != 1 || errs[0].Line != 2 || string(errs[0].Raw) != good[:20] {
		t.Errorf("read %v and %v; want [1 2] and line 2 reported", got, errs)
	}

	// A line cut short while the sink is open — a write that failed half
	// done — is reported as what it is.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(good[:30])
	f.Close()
	_, errs = readAll(t, s)
	if len(errs) != 2 || errs[1].Line != 4 || !errors.Is(errs[1], io.ErrUnexpectedEOF) || !strings.Contains(errs[1].Error(), "cut it short") {
		t.Errorf("line errors %v; want the last, line 4, cut short", errs)
	}
}

// TestFileSinkPutAfterFailedWrite: a Put whose write failed partway, as on
// a full disk, costs its own letter only: the next Put starts a line of
// its own, and reads back.
func TestFileSinkPutAfterFailedWrite(t *testing.T) {
	noLeaks(t)
	s := openSink[int](t, "")
	failed := false
	s.writeFile = func(f *os.File, b []byte) (int, error) {
		if failed {
			return f.Write(b)
		}
		failed = true
		n, _ := f.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	if err := s.Put(DeadLetter[int]{Reason: ReasonDropped, Task: Task[int]{ID: 1, Payload: 1}}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Put on a full disk = %v, want ENOSPC", err)
	}
	if err := s.Put(DeadLetter[int]{Reason: ReasonDropped, Task: Task[int]{ID: 2, Payload: 2}}); err != nil {
		t.Fatal(err)
	}
	got, errs := readAll(t, s)
	if !slices.Equal(got, []int{2}) || len(errs) != 1 || errs[0].Line != 1 {
		t.Errorf("read %v and %v; want [2], and line 1, the half-written letter, reported", got, errs)
	}
}

// TestFileSinkPutTooLong: a letter too long to be read back is refused.
func TestFileSinkPutTooLong(t *testing.T) {
	noLeaks(t)
	s := openSink[string](t, "")
	err := s.Put(DeadLetter[string]{Reason: ReasonDropped, Task: Task[string]{ID: 4, Payload: strings.Repeat("x", maxLine)}})
	if err == nil || !strings.Contains(err.Error(), "task 4") || !strings.Contains(err.Error(), "more than the 16777216") {
		t.Errorf("Put of a 16 MiB payload = %v", err)
	}
}

// TestFileSinkOnePerFile: a file takes one FileSink at a time, since a
// replay rewrites it under the others.
func TestFileSinkOnePerFile(t *testing.T) {
	noLeaks(t)
	if !fileLocking {
		t.Skip("no flock(2) here: one FileSink per file is the user's to keep to")
	}
	s := openSink[int](t, "")
	if _, err := OpenFileSink[int](s.Path()); err == nil || !strings.Contains(err.Error(), "open in another FileSink") {
		t.Fatalf("a second OpenFileSink of the file = %v, want it refused", err)
	}
	s.Close()
	again, err := OpenFileSink[int](s.Path())
	if err != nil {
		t.Fatalf("OpenFileSink after Close: %v", err)
	}
	again.Close()
}

// TestFileSinkMove moves some letters out and leaves the others, and the
// records of those moved hide them until the rewrite at the end.
func TestFileSinkMove(t *testing.T) {
	noLeaks(t)
	bad := "{oops"
	s := openSink[int](t, line(t, 1)+"\n"+line(t, 2)+"\n"+bad+"\n"+line(t, 3)+"\n"+line(t, 4)+"\n")
	var offered []int
	var unreadable []int
	err := s.Move(func(l DeadLetter[int], err error) (bool, error) {
		var le *LineError
		if errors.As(err, &le) {
			unreadable = append(unreadable, le.Line)
			return true, nil // ignored: a line that holds no letter stays
		}
		offered = append(offered, l.Task.Payload)
		if l.Task.Payload == 2 {
			// Meanwhile, another letter is put.
			if err := s.Put(DeadLetter[int]{Reason: ReasonDropped, Task: Task[int]{Payload: 5}}); err != nil {
				t.Fatal(err)
			}
		}
		if l.Task.Payload == 3 {
			// A reading sees neither the letters moved nor their
			// records.
			if got, errs := readAll(t, s); !slices.Equal(got, []int{3, 4, 5}) || len(errs) != 1 {
				t.Errorf("during the move, a reading sees %v and %v, want [3 4 5] and the bad line", got, errs)
			}
			return false, nil // kept
		}
		if l.Task.Payload == 4 {
			return true, errors.New("enough")
		}
		return true, nil
	})
	if err == nil || err.Error() != "enough" {
		t.Errorf("Move = %v, want take's error", err)
	}
	if !slices.Equal(offered, []int{1, 2, 3, 4}) || !slices.Equal(unreadable, []int{3}) {
		t.Errorf("offered %v and unreadable lines %v", offered, unreadable)
	}
	raw, _ := os.ReadFile(s.Path())
	got, errs := readAll(t, s)
	if !slices.Equal(got, []int{3, 5}) || len(errs) != 1 || string(errs[0].Raw) != bad || strings.Contains(string(raw), "moved") {
		t.Errorf("after the move the file holds %v and %v:\n%s\nwant [3 5], the bad line, and no records", got, errs, raw)
	}
	if !strings.HasPrefix(string(raw), bad+"\n") {
		t.Errorf("the bad line is not first in the file:\n%s", raw)
	}
}

// TestFileSinkMoveRecordsHide: a replay whose rewrite did not happen (the
// sink was closed, or the process died) leaves the records of what it
// moved, which hide those letters from the next reading and replay, which
// rewrites the file.
func TestFileSinkMoveRecordsHide(t *testing.T) {
	noLeaks(t)
	dup := line(t, 7)
	content := dup + "\n" + line(t, 1) + "\n" + dup + "\n" + line(t, 2) + "\n"
	s := openSink[int](t, content)
	closed := false
	s.Move(func(l DeadLetter[int], err error) (bool, error) {
		if l.Task.Payload == 1 && !closed {
			s.Close() // a record can no longer be written: this one stays
			closed = true
		}
		return true, nil
	})
	raw, _ := os.ReadFile(s.Path())
	if !strings.HasPrefix(string(raw), content) || strings.Count(string(raw), `{"moved":"`) != 1 {
		t.Fatalf("after a move cut short the file holds\n%s\nwant the letters and one record", raw)
	}

	// The record hides the first line before it with the same bytes — of
	// two identical letters, the first — wherever it now is: mending a line
	// by hand before it, which moves every line after, does not change
	// which.
	os.WriteFile(s.Path(), []byte(strings.Replace(string(raw), line(t, 1), "{mended", 1)), 0o600)
	s, err := OpenFileSink[int](s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, errs := readAll(t, s)
	if !slices.Equal(got, []int{7, 2}) || len(errs) != 1 || errs[0].Line != 2 {
		t.Errorf("with a record for the first 7, a reading sees %v and %v, want [7 2] and line 2 bad", got, errs)
	}
	if err := s.Move(func(DeadLetter[int], error) (bool, error) { return false, nil }); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(s.Path()); strings.Contains(string(raw), "moved") || strings.Count(string(raw), dup) != 1 {
		t.Errorf("a move that took nothing left\n%s\nwant the file rewritten without the record and the letter it hides", raw)
	}
}

// TestFileSinkOneMoveAtATime: a second replay of the same sink fails at
// once rather than sending the same letters.
func TestFileSinkOneMoveAtATime(t *testing.T) {
	noLeaks(t)
	s := openSink[int](t, line(t, 1)+"\n")
	s.Move(func(DeadLetter[int], error) (bool, error) {
		err := s.Move(func(DeadLetter[int], error) (bool, error) { return true, nil })
		if err == nil || !strings.Contains(err.Error(), "another replay") {
			t.Errorf("a second Move = %v", err)
		}
		return false, nil
	})
}

// BenchmarkReplayFile measures a replay from a file per letter moved: the
// task's round trip through the actor, the moved record written and synced,
// and a share of the rewrite at the end. The copy is a replay from a ring,
// which sends without waiting: the price of resuming.
func BenchmarkReplayFile(b *testing.B) {
	const letters = 200
	content := strings.Repeat(line(b, 1)+"\n", letters)
	b.Run("move/file", func(b *testing.B) {
		a := newActor(b, "bench", nop, Config[int]{Logger: quiet})
		path := filepath.Join(b.TempDir(), "dead.jsonl")
		for b.Loop() {
			b.StopTimer()
			os.WriteFile(path, []byte(content), 0o600)
			s, err := OpenFileSink[int](path)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if n, err := a.Replay(context.Background(), s); n != letters || err != nil {
				b.Fatal(n, err)
			}
			s.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*letters), "ns/letter")
	})
	b.Run("copy/ring", func(b *testing.B) {
		a := newActor(b, "bench", nop, Config[int]{Logger: quiet})
		ring := NewRingSink[int](letters)
		for range letters {
			ring.Put(DeadLetter[int]{Reason: ReasonDropped, Task: Task[int]{Payload: 1}})
		}
		for b.Loop() {
			if n, err := a.Replay(context.Background(), ring); n != letters || err != nil {
				b.Fatal(n, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*letters), "ns/letter")
	})
}
