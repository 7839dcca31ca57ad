package tracerec

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/actorpool/actorpool/actor/tasktrace"
	"github.com/actorpool/actorpool/internal/errs"
)

// TestRecorder checks that a send's headers come back in the attempt's
// context, and that sends and attempts are kept as they end.
func TestRecorder(t *testing.T) {
	r := New[tasktrace.AttemptResult](map[string]string{"traceparent": "p"})
	_, h, end := r.StartSend(t.Context(), tasktrace.SendInfo{Actor: "a", Count: 1})
	h["traceparent"] = "changed by the actor"
	if _, h, _ := r.StartSend(t.Context(), tasktrace.SendInfo{}); h["traceparent"] != "p" {
		t.Errorf("a send returned %v: an actor's change to another send's headers reached it", h)
	}
	errRefused := errors.New("refused")
	end(nil, errRefused)
	if s := r.Sends(); len(s) != 1 || s[0].Info.Actor != "a" || s[0].Err != errRefused {
		t.Errorf("sends %+v, want the one refused", s)
	}
	sent := map[string]string{"traceparent": "p"}
	ctx, endAttempt := r.StartAttempt(context.Background(), tasktrace.AttemptInfo{ID: 3}, sent)
	if got := Header(ctx, "traceparent"); got != "p" {
		t.Errorf("Header = %q, want p", got)
	}
	r.NoMore(t)
	endAttempt(tasktrace.AttemptResult{Outcome: tasktrace.OutcomeCompleted})
	if a := r.Next(t); a.Info.ID != 3 || !maps.Equal(a.Headers, sent) || a.Result.Outcome != tasktrace.OutcomeCompleted {
		t.Errorf("attempt %+v, want task 3's, completed, with the send's headers", a)
	}
	defer func() {
		if recover() == nil {
			t.Error("an attempt ended twice without a panic")
		}
	}()
	endAttempt(tasktrace.AttemptResult{})
}

// TestIsPanic checks that IsPanic tells a Panicking tracer's panic in a
// callback, recovered as the actors recover it, from other errors, and
// that Panicked is its message.
func TestIsPanic(t *testing.T) {
	p := &Panicking[tasktrace.AttemptResult]{Recorder: New[tasktrace.AttemptResult](nil), At: AtStartSend}
	panicked := errs.Protect("Tracer.StartSend", func() { p.StartSend(t.Context(), tasktrace.SendInfo{}) })
	tests := []struct {
		name string
		err  error
		fn   string
		want bool
	}{
		{"its panic", panicked, "Tracer.StartSend", true},
		{"wrapped", fmt.Errorf("send: %w", panicked), "Tracer.StartSend", true},
		{"in another callback", panicked, "Tracer.StartAttempt", false},
		{"another panic", errs.Protect("Tracer.StartSend", func() { panic("another") }), "Tracer.StartSend", false},
		{"its message only", errors.New(panicked.Error()), "Tracer.StartSend", false},
		{"nil", nil, "Tracer.StartSend", false},
	}
	for _, tt := range tests {
		if got := IsPanic(tt.err, tt.fn); got != tt.want {
			t.Errorf("%s: IsPanic(%v, %q) = %v, want %v", tt.name, tt.err, tt.fn, got, tt.want)
		}
	}
	if got := Panicked("Tracer.StartSend"); got != panicked.Error() {
		t.Errorf("Panicked = %q, want the panic's message, %q", got, panicked.Error())
	}
}
