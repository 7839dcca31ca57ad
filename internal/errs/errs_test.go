package errs

import (
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
)

func TestConfigErrorMessage(t *testing.T) {
	tests := []struct {
		value any
		want  string
	}{
		{0, "p: Config.F is 0: must be so"},
		{"", "p: Config.F is empty: must be so"},
		{"udp", `p: Config.F is "udp": must be so`},
		{nil, "p: Config.F is nil: must be so"},
		{-time.Second, "p: Config.F is -1s: must be so"},
		{struct{ A int }{1}, "p: Config.F is {A:1}: must be so"},
	}
	for _, tt := range tests {
		c := NewChecker("p")
		c.Bad("F", tt.value, "must be so")
		if got := c.Err().Error(); got != tt.want {
			t.Errorf("value %#v: %q, want %q", tt.value, got, tt.want)
		}
	}
	if got := (&ConfigError{Field: "F", Value: 1, Rule: "must be so"}).Error(); got != "Config.F is 1: must be so" {
		t.Errorf("a ConfigError made by hand: %q", got)
	}
}

func TestChecker(t *testing.T) {
	c := NewChecker("p")
	if c.Err() != nil {
		t.Fatalf("an empty Checker: %v, want nil", c.Err())
	}
	NotNegative(c, "A", 0, "none")
	NotNegative(c, "B", -2, "none")
	NotNegative(c, "C", -time.Millisecond, "never")
	err := c.Err()
	want := "p: Config.B is -2: must not be negative (zero means none)\np: Config.C is -1ms: must not be negative (zero means never)"
	if err == nil || err.Error() != want {
		t.Fatalf("Err() = %v, want\n%s", err, want)
	}
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "B" || ce.Value != -2 {
		t.Errorf("errors.As found %+v, want the error for B, -2", ce)
	}
}

// TestAdopt checks that another package's ConfigErrors are reported as
// the adopting package's, and other errors as they are.
func TestAdopt(t *testing.T) {
	inner := NewChecker("actor")
	inner.Bad("Workers", -1, "must not be negative")
	inner.Bad("Grace", -time.Second, "must not be negative")
	other := io.ErrUnexpectedEOF
	c := NewChecker("pgactor")
	c.Adopt(errors.Join(inner.Err(), other))
	c.Adopt(nil)
	c.Bad("Lease", time.Millisecond, "must be at least 100ms")
	want := "pgactor: Config.Workers is -1: must not be negative\n" +
		"pgactor: Config.Grace is -1s: must not be negative\n" +
		"unexpected EOF\n" +
		"pgactor: Config.Lease is 1ms: must be at least 100ms"
	if got := c.Err().Error(); got != want {
		t.Errorf("adopted errors:\n%s\nwant\n%s", got, want)
	}
	if !errors.Is(c.Err(), other) {
		t.Error("an adopted error that is not a ConfigError was lost")
	}
}

func TestPanicError(t *testing.T) {
	e := &PanicError{Func: "Factory.Create", Value: io.EOF}
	if got := e.Error(); got != "Factory.Create panicked: EOF" || !errors.Is(e, io.EOF) {
		t.Errorf("%q, Is(EOF) %v; want it to name Func and the value, and match the value", got, errors.Is(e, io.EOF))
	}
	if got := (&PanicError{Func: "handler", Goexit: true}).Error(); got != "handler called runtime.Goexit" {
		t.Errorf("Goexit: %q", got)
	}
	if (&PanicError{Func: "handler", Value: "x"}).Unwrap() != nil {
		t.Error("a panic with a string unwraps to an error")
	}
}

func TestProtect(t *testing.T) {
	if err := Protect("f", func() {}); err != nil {
		t.Errorf("a call that returns: %v, want nil", err)
	}
	err := Protect("Tracer.StartSend", func() { panic(io.EOF) })
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Func != "Tracer.StartSend" || pe.Value != io.EOF || len(pe.Stack) == 0 {
		t.Errorf("a call that panics: %#v, want a *PanicError naming it, with the value and a stack", err)
	}
	if err := Protect("f", func() { panic(nil) }); err == nil {
		t.Error("panic(nil) was not recovered")
	}
}

// The errors a handler may return, to CheckHandlerError.
type (
	// snoozeError stands for a package's SnoozeError.
	snoozeError struct{}
	// causeError's methods read its field: a nil *causeError panics in
	// Error and Unwrap.
	causeError struct{ cause error }
	// isPanics panics when errors.Is asks it; asPanics, errors.As.
	isPanics struct{}
	asPanics struct{}
)

func (*snoozeError) Error() string  { return "snoozed" }
func (e *causeError) Error() string { return "failed: " + e.cause.Error() }
func (e *causeError) Unwrap() error { return e.cause }
func (isPanics) Error() string      { return "is panics" }
func (isPanics) Is(error) bool      { panic("Is") }
func (asPanics) Error() string      { return "as panics" }
func (asPanics) As(any) bool        { panic("As") }

// TestCheckHandlerError checks that a handler's error is returned as it
// is unless one of the methods that settling calls on it panics: its
// message, and those that errors.Is and errors.As call on it and what it
// wraps.
func TestCheckHandlerError(t *testing.T) {
	permanent := errors.New("permanent")
	tests := []struct {
		name     string
		err      error
		panicked bool
	}{
		{"nil", nil, false},
		{"plain", io.EOF, false},
		{"permanent", fmt.Errorf("bad request: %w", permanent), false},
		{"snoozed", fmt.Errorf("later: %w", &snoozeError{}), false},
		{"cause", &causeError{io.EOF}, false},
		{"nil pointer", (*causeError)(nil), true},
		{"nil pointer wrapped", fmt.Errorf("wrapped: %w", (*causeError)(nil)), true},
		{"Is panics", isPanics{}, true},
		{"As panics", asPanics{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckHandlerError[*snoozeError](tt.err, permanent)
			var pe *PanicError
			switch {
			case !tt.panicked && err != tt.err:
				t.Errorf("CheckHandlerError = %v, want the error itself", err)
			case tt.panicked && (err == tt.err || !errors.As(err, &pe) || pe.Func != "the handler's error" || len(pe.Stack) == 0):
				t.Errorf("CheckHandlerError = %v, want a *PanicError of the handler's error", err)
			}
		})
	}
}
