package actor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestReasonText(t *testing.T) {
	noLeaks(t)
	for r := ReasonClosed; r <= ReasonPermanent; r++ {
		text, err := r.MarshalText()
		if err != nil || string(text) != r.String() || strings.HasPrefix(r.String(), "Reason(") {
			t.Errorf("%d.MarshalText() = %q, %v", r, text, err)
		}
		var back Reason
		if err := back.UnmarshalText(text); err != nil || back != r {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", text, back, err, r)
		}
	}
	if _, err := Reason(0).MarshalText(); err == nil {
		t.Error("the zero Reason encodes")
	}
	var r Reason
	if err := r.UnmarshalText([]byte("bored")); err == nil {
		t.Error("an unknown reason decodes")
	}
}

func TestRingSink(t *testing.T) {
	noLeaks(t)
	s := NewRingSink[int](3)
	for i := range 5 {
		s.Put(DeadLetter[int]{Task: Task[int]{Payload: i}})
	}
	if got := payloads(t, s); !slices.Equal(got, []int{2, 3, 4}) || s.Len() != 3 || s.Overwritten() != 2 {
		t.Errorf("ring of 3 after 5 letters holds %v (len %d, overwritten %d), want [2 3 4]", got, s.Len(), s.Overwritten())
	}
	s.Clear()
	if got := payloads(t, s); len(got) != 0 || s.Len() != 0 {
		t.Errorf("after Clear: %v", got)
	}
	s.Put(DeadLetter[int]{Task: Task[int]{Payload: 9}})
	if got := payloads(t, s); !slices.Equal(got, []int{9}) {
		t.Errorf("after Clear and Put: %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewRingSink(0) did not panic")
		}
	}()
	NewRingSink[int](0)
}

type login struct {
	User string `json:"user"`
	IP   string `json:"ip"`
}

// TestFileSinkRoundTrip writes letters, reads them back after reopening the
// file, and replays them into an actor.
func TestFileSinkRoundTrip(t *testing.T) {
	noLeaks(t)
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	s, err := OpenFileSink[login](path)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	want := []DeadLetter[login]{
		{Actor: "audit", Reason: ReasonMaxAttempts, Err: errors.New("pq: deadlock detected"), Attempts: 3, Time: when,
			Task: Task[login]{ID: 7, Type: "createUserDevice", Attempt: 3, Enqueued: when.Add(-time.Minute), Payload: login{"ana", "10.0.0.1"}}},
		{Actor: "audit", Reason: ReasonDrainDeadline, Time: when,
			Task: Task[login]{ID: 8, Type: "createUserDevice", Attempt: 1, Enqueued: when, Payload: login{"bo", "10.0.0.2"}}},
	}
	for _, l := range want {
		if err := s.Put(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(want[0]); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Put after Close = %v, want os.ErrClosed", err)
	}

	// A later run opens the same file and reads what the earlier one wrote.
	s, err = OpenFileSink[login](path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := letters(t, s)
	if len(got) != len(want) {
		t.Fatalf("read %d letters, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if (g.Err == nil) != (w.Err == nil) || (g.Err != nil && g.Err.Error() != w.Err.Error()) {
			t.Errorf("letter %d error %v, want %v", i, g.Err, w.Err)
		}
		g.Err, w.Err = nil, nil
		if !g.Time.Equal(w.Time) || !g.Task.Enqueued.Equal(w.Task.Enqueued) {
			t.Errorf("letter %d times %v, %v; want %v, %v", i, g.Time, g.Task.Enqueued, w.Time, w.Task.Enqueued)
		}
		g.Time, w.Time, g.Task.Enqueued, w.Task.Enqueued = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if g != w {
			t.Errorf("letter %d = %+v, want %+v", i, g, w)
		}
	}

	// Each line is plain JSON with readable fields.
	raw, _ := os.ReadFile(path)
	first, _, _ := strings.Cut(string(raw), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(first), &m); err != nil || m["reason"] != "max attempts" || m["error"] != "pq: deadlock detected" {
		t.Errorf("line %s", first)
	}

	// Replay sends them to an actor, with their types.
	var ran record[Task[login]]
	a := newActor(t, "audit", func(ctx context.Context, task Task[login]) error {
		ran.add(task)
		return nil
	}, Config[login]{DeadLetters: s})
	n, err := a.Replay(t.Context(), s)
	if n != 2 || err != nil {
		t.Fatalf("Replay = %d, %v", n, err)
	}
	a.Close(t.Context())
	tasks := ran.get()
	if len(tasks) != 2 || tasks[0].Payload != want[0].Task.Payload || tasks[1].Type != "createUserDevice" || tasks[0].Attempt != 1 {
		t.Errorf("replayed %+v", tasks)
	}
	// Replayed, they left the file.
	if raw, err := os.ReadFile(path); err != nil || len(raw) != 0 {
		t.Errorf("after the replay the file holds %q, %v; want it empty", raw, err)
	}
}

// TestFileSinkReplayEnds replays a file into an actor whose failures go to
// the same file: the replay reads only what was there when it began.
func TestFileSinkReplayEnds(t *testing.T) {
	noLeaks(t)
	s, err := OpenFileSink[int](filepath.Join(t.TempDir(), "dead.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 3 {
		s.Put(DeadLetter[int]{Reason: ReasonDropped, Task: Task[int]{Payload: i}})
	}
	a := newActor(t, "always-failing", func(ctx context.Context, task Task[int]) error {
		return Permanent(errors.New("still broken"))
	}, Config[int]{DeadLetters: s, OnError: func(*TaskError) {}})
	// Before reading on, wait for each replayed letter's failure to be in
	// the file, so that a reader that does not stop where the file ended
	// would see it; stop such a reader after 6 letters.
	src := afterEach[int]{s, func(n int) bool {
		waitFor(t, func() bool { return a.Stats().DeadLettered == uint64(n) })
		return n < 6
	}}
	if n, err := a.Replay(t.Context(), src); n != 3 || err != nil {
		t.Fatalf("Replay = %d, %v; want 3, nil", n, err)
	}
	a.Close(t.Context())
	if got := payloads(t, s); !slices.Equal(got, []int{0, 1, 2, 0, 1, 2}) {
		t.Errorf("file holds %v, want the 3 letters and their 3 new failures", got)
	}
}

// TestFileSinkRefusesPayload checks that a letter whose payload cannot be
// encoded fails Put, so that the actor logs it instead.
func TestFileSinkRefusesPayload(t *testing.T) {
	noLeaks(t)
	s, err := OpenFileSink[chan int](filepath.Join(t.TempDir(), "dead.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Put(DeadLetter[chan int]{Reason: ReasonDropped, Task: Task[chan int]{Payload: make(chan int)}}); err == nil {
		t.Error("Put of a channel payload succeeded")
	}
}

// TestLogSinkRateLimit checks the slog sink's burst, rate and report of what
// it left out, on a fake clock.
func TestLogSinkRateLimit(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		s := NewLogSink[string](slog.New(slog.NewJSONHandler(&buf, nil)), time.Second, 3)
		put := func(n int) {
			for range n {
				s.Put(DeadLetter[string]{Actor: "mail", Reason: ReasonMaxAttempts, Err: errors.New("timeout"), Attempts: 2,
					Task: Task[string]{ID: 5, Type: "welcome", Payload: "ana@example.com"}})
			}
		}
		lines := func() []map[string]any {
			var out []map[string]any
			dec := json.NewDecoder(&buf)
			for {
				var m map[string]any
				if err := dec.Decode(&m); err == io.EOF {
					return out
				} else if err != nil {
					t.Fatal(err)
				}
				out = append(out, m)
			}
		}
		put(10)
		if got := lines(); len(got) != 3 || s.Suppressed() != 7 {
			t.Fatalf("10 letters at once: logged %d, suppressed %d; want 3 and 7", len(got), s.Suppressed())
		}
		time.Sleep(999 * time.Millisecond)
		put(1)
		if got := lines(); len(got) != 0 {
			t.Fatalf("before a second has passed: logged %d", len(got))
		}
		time.Sleep(time.Millisecond)
		put(1)
		got := lines()
		if len(got) != 1 || got[0]["suppressed"] != 8.0 {
			t.Fatalf("after a second: %v; want one line reporting 8 suppressed", got)
		}
		l := got[0]
		if l["level"] != "ERROR" || l["actor"] != "mail" || l["reason"] != "max attempts" || l["task_id"] != 5.0 ||
			l["task_type"] != "welcome" || l["payload"] != "ana@example.com" || l["error"] != "timeout" || l["attempts"] != 2.0 {
			t.Errorf("log line %v", l)
		}
		time.Sleep(time.Hour) // the bucket refills to the burst, no further
		put(5)
		if got := lines(); len(got) != 3 {
			t.Errorf("after an hour: logged %d of 5, want the burst of 3", len(got))
		}

		unlimited := NewLogSink[string](slog.New(slog.NewJSONHandler(&buf, nil)), 0, 0)
		for range 100 {
			unlimited.Put(DeadLetter[string]{Reason: ReasonDropped})
		}
		if got := lines(); len(got) != 100 {
			t.Errorf("unlimited sink logged %d of 100", len(got))
		}
	})
}

// TestDefaultSinkLogs checks that an actor without a sink logs its dead
// letters.
func TestDefaultSinkLogs(t *testing.T) {
	noLeaks(t)
	var buf bytes.Buffer
	a := newActor(t, "default-sink", func(ctx context.Context, task Task[int]) error {
		return Permanent(errors.New("nope"))
	}, Config[int]{Logger: slog.New(slog.NewTextHandler(&buf, nil)), OnError: func(*TaskError) {}})
	a.Send(t.Context(), 42)
	a.Close(t.Context())
	if out := buf.String(); !strings.Contains(out, `msg="actor: dead letter"`) || !strings.Contains(out, "payload=42") || !strings.Contains(out, `reason="permanent error"`) {
		t.Errorf("log: %s", out)
	}
}

// afterEach is a Source that calls after once each letter has been taken,
// and stops when it returns false.
type afterEach[T any] struct {
	src   Source[T]
	after func(n int) bool
}

func (s afterEach[T]) Letters() iter.Seq2[DeadLetter[T], error] {
	return func(yield func(DeadLetter[T], error) bool) {
		n := 0
		for l, err := range s.src.Letters() {
			if !yield(l, err) {
				return
			}
			n++
			if !s.after(n) {
				return
			}
		}
	}
}
