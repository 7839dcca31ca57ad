package tracerec

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/actorpool/actorpool/actor/tasktrace"
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
