package actor

import (
	"context"
	"errors"
	"iter"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestReplayMoves checks how a replay from a file ends each letter:
// completed or failed again, it leaves the file (a failure comes back as a
// new letter of the actor's sink); refused, or still running when ctx
// ends, it stays.
func TestReplayMoves(t *testing.T) {
	noLeaks(t)
	s := openSink[int](t, line(t, 1)+"\n"+line(t, 2)+"\n"+line(t, 3)+"\n"+line(t, 4)+"\n")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	release := make(chan struct{})
	a := newActor(t, "moves", func(ctx context.Context, task Task[int]) error {
		switch task.Payload {
		case 2:
			return Permanent(errors.New("still broken"))
		case 3:
			cancel() // the replay stops waiting; the task goes on
			<-release
		}
		return nil
	}, Config[int]{DeadLetters: s, OnError: func(*TaskError) {}})
	n, err := a.Replay(ctx, s)
	var re *ReplayError
	if n != 2 || !errors.As(err, &re) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "the next replay sends it again") {
		t.Fatalf("Replay = %d, %v; want 2 and the context's error", n, err)
	}
	close(release)
	got, _ := readAll(t, s)
	if !slices.Equal(got, []int{3, 4, 2}) {
		t.Errorf("after the replay the file holds %v, want [3 4 2]: the running one, the one not sent, and the new failure", got)
	}

	// Into a closed actor: refused, the letters stay.
	a.Close(t.Context())
	n, err = a.Replay(t.Context(), s)
	if n != 0 || !errors.Is(err, ErrClosed) {
		t.Errorf("Replay into a closed actor = %d, %v", n, err)
	}
	if got, _ := readAll(t, s); !slices.Equal(got, []int{3, 4, 2}) {
		t.Errorf("after a refused replay the file holds %v, want [3 4 2]", got)
	}
}

// TestReplayRefusedToDeadLetters: an actor that dead-letters what it
// refuses (DeadLetterRejected) has the refused letter in its sink already;
// the replay takes it out of the file, so that it is not there twice.
func TestReplayRefusedToDeadLetters(t *testing.T) {
	noLeaks(t)
	s := openSink[int](t, line(t, 1)+"\n"+line(t, 2)+"\n")
	a := newActor(t, "refusing", func(context.Context, Task[int]) error { return nil },
		Config[int]{DeadLetters: s, DeadLetterRejected: true})
	a.Close(t.Context())
	n, err := a.Replay(t.Context(), s)
	if n != 1 || !errors.Is(err, ErrClosed) {
		t.Errorf("Replay into a closed actor = %d, %v; want the refused letter moved, and ErrClosed", n, err)
	}
	ls := letters(t, s)
	if len(ls) != 2 || ls[0].Task.Payload != 2 || ls[1].Task.Payload != 1 || ls[1].Reason != ReasonRejected {
		t.Errorf("the file holds %+v; want letter 2, then letter 1 rejected", ls)
	}
}

// TestReplayCopies: from a Source that is not a Mover, Replay copies, goes
// past the lines that hold no letter, and reports them.
func TestReplayCopies(t *testing.T) {
	noLeaks(t)
	bad := &LineError{Path: "somewhere", Line: 2, Err: errors.New("no good")}
	src := sourceFunc[int](func(yield func(DeadLetter[int], error) bool) {
		_ = yield(DeadLetter[int]{Task: Task[int]{Payload: 1}}, nil) &&
			yield(DeadLetter[int]{}, bad) &&
			yield(DeadLetter[int]{Task: Task[int]{Payload: 3}}, nil)
	})
	var ran record[int]
	a := newActor(t, "copies", func(_ context.Context, task Task[int]) error {
		ran.add(task.Payload)
		return nil
	}, Config[int]{})
	n, err := a.Replay(t.Context(), src)
	var re *ReplayError
	if n != 2 || !errors.As(err, &re) || re.Err != nil || len(re.Unreadable) != 1 || !errors.Is(err, bad) ||
		err.Error() != `replay into "copies": 2 replayed; 1 line holds no letter and stays in the source, to mend or remove by hand: somewhere:2 (no good)` {
		t.Fatalf("Replay = %d, %v", n, err)
	}
	a.Close(t.Context())
	if got := ran.get(); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("the handler saw %v, want [1 3]", got)
	}
}

type sourceFunc[T any] func(yield func(DeadLetter[T], error) bool)

func (f sourceFunc[T]) Letters() iter.Seq2[DeadLetter[T], error] {
	return iter.Seq2[DeadLetter[T], error](f)
}

// TestReplayFromClosedFileSink: a closed FileSink cannot record a letter as
// moved, so a replay from it must send none — each it sent would stay in
// the file and run again on the next replay.
func TestReplayFromClosedFileSink(t *testing.T) {
	noLeaks(t)
	s := openSink[int](t, line(t, 1)+"\n"+line(t, 2)+"\n")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var ran record[int]
	a := newActor(t, "closed-sink", func(_ context.Context, task Task[int]) error {
		ran.add(task.Payload)
		return nil
	}, Config[int]{})
	n, err := a.Replay(t.Context(), s)
	if n != 0 || !errors.Is(err, os.ErrClosed) {
		t.Errorf("Replay from a closed sink = %d, %v; want 0 and os.ErrClosed", n, err)
	}
	a.Close(t.Context())
	if got := ran.get(); len(got) != 0 {
		t.Errorf("the handler ran %v, which stay in the file to run again", got)
	}
	if got, _ := readAll(t, s); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("the file holds %v, want [1 2]", got)
	}
}
