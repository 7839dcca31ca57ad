// Package errs holds the error types that the module's packages share, so
// that every package reports a bad setting and a recovered panic in the
// same shape and the same words. Each public package exposes them under its
// own name with a type alias: actorpool.ConfigError and actor.ConfigError
// are one type, which errors.As finds whichever name it is given.
package errs

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// A ConfigError names a configuration field whose value breaks a rule, the
// value, and what is allowed.
type ConfigError struct {
	Field string // the field, such as "MaxObjects" or "Backoff.Initial"
	Value any    // the value it has
	Rule  string // what is allowed, such as "must be between 1 and 1048576"

	pkg string // the package whose Config it is, for the message; "" for none
}

// Error reads "pkg: Config.Field is value: rule", such as
// "actorpool: Config.MinIdle is 9: must not exceed MaxObjects (8)". An
// empty string reads "empty", a string is quoted.
func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.pkg != "" {
		b.WriteString(e.pkg + ": ")
	}
	b.WriteString("Config." + e.Field + " is ")
	switch v := e.Value.(type) {
	case nil:
		b.WriteString("nil")
	case string:
		if v == "" {
			b.WriteString("empty")
		} else {
			fmt.Fprintf(&b, "%q", v)
		}
	default:
		fmt.Fprintf(&b, "%+v", v)
	}
	b.WriteString(": " + e.Rule)
	return b.String()
}

// A Checker collects the ConfigErrors of one configuration, so that its
// Validate reports every field at fault at once. Its zero value is not
// usable: make one with NewChecker.
type Checker struct {
	pkg  string
	errs []error
}

// NewChecker returns a Checker for the Config of package pkg, which its
// errors' messages name.
func NewChecker(pkg string) *Checker { return &Checker{pkg: pkg} }

// Bad records that field, whose value is value, breaks rule.
func (c *Checker) Bad(field string, value any, rule string) {
	c.errs = append(c.errs, &ConfigError{Field: field, Value: value, Rule: rule, pkg: c.pkg})
}

// Adopt records the ConfigErrors in err, the result of another package's
// Validate on fields that this package's Config shares with it, as this
// package's: pgactor.Config checks its worker fields by actor.Config's
// rules, and reports them as its own. Errors of other types are recorded
// as they are.
func (c *Checker) Adopt(err error) {
	switch e := err.(type) {
	case nil:
	case *ConfigError:
		c.Bad(e.Field, e.Value, e.Rule)
	case interface{ Unwrap() []error }:
		for _, e := range e.Unwrap() {
			c.Adopt(e)
		}
	default:
		c.errs = append(c.errs, err)
	}
}

// Err returns the errors recorded, joined with errors.Join, or nil.
func (c *Checker) Err() error { return errors.Join(c.errs...) }

// NotNegative records that field, whose value is v, must not be negative,
// unless it is not; zero says what a zero value means, such as "no limit".
// Every package words the rule so.
func NotNegative[N ~int | ~int64](c *Checker, field string, v N, zero string) {
	if v < 0 {
		c.Bad(field, v, "must not be negative (zero means "+zero+")")
	}
}

// A PanicError is a panic, or a call to runtime.Goexit, recovered from a
// function the library called on the user's behalf — a factory's method,
// an actor's handler, a sink — with the stack of the goroutine where it
// happened.
type PanicError struct {
	Func   string // what panicked, such as "Factory.Create" or "handler"
	Value  any    // the value passed to panic; nil after runtime.Goexit
	Goexit bool   // Func called runtime.Goexit rather than panicking
	Stack  []byte // the goroutine's stack where it panicked or exited
}

// Error says what panicked and with what, or that it called
// runtime.Goexit.
func (e *PanicError) Error() string {
	if e.Goexit {
		return e.Func + " called runtime.Goexit"
	}
	return fmt.Sprintf("%s panicked: %v", e.Func, e.Value)
}

// Unwrap returns the panic value if it is an error, so that errors.Is and
// errors.As see through a panic(err).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Protect calls fn, and returns its panic as a *PanicError naming what as
// the function that panicked; nil when fn returns. The durable actors call
// a Tracer through it, so that the tracer's bug fails no more than the
// step it was called for, rather than the goroutine that called it.
func Protect(what string, fn func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Func: what, Value: v, Stack: debug.Stack()}
		}
	}()
	fn()
	return nil
}

// CheckHandlerError returns err, a durable actor's handler's, or a
// *PanicError when a method of err that settling its attempt calls
// panics: Error, and those that errors.Is(err, permanent) and errors.As
// for an S, the package's snooze error, call. They are the handler's code
// too, and a nil *E returned as an error, whose methods read its fields,
// panics in them: that fails the attempt, as a panic in the handler does,
// rather than the process that settles it.
func CheckHandlerError[S error](err, permanent error) error {
	if err == nil {
		return nil
	}
	if perr := Protect("the handler's error", func() {
		_ = err.Error()
		_ = errors.Is(err, permanent)
		var snoozed S
		_ = errors.As(err, &snoozed)
	}); perr != nil {
		return perr
	}
	return err
}
