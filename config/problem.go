package config

import (
	"fmt"
	"strconv"
	"strings"
)

// A Problem is one thing wrong with a configuration file: where it is, the
// setting it concerns, and the rule it breaks.
type Problem struct {
	File   string // the file's path, as given to Load or Parse
	Line   int    // 1-based line of the value at fault; 0 if none applies
	Column int    // 1-based column; 0 if none applies
	// Env is the environment variable the value came from, if it did.
	Env string
	// Field is the setting's path in the file, such as
	// "pools.redis.max_objects"; empty for a problem with the file itself.
	Field string
	// Value is the value as written, in the file or the environment, and
	// Set reports whether there was one: it is false for a setting left
	// out and for a problem that is not about a value.
	Value string
	Set   bool
	Rule  string // what is wrong, or what is allowed
}

// Error formats the problem as "file:line:col: field = value: rule".
func (p *Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		b.WriteString(":" + strconv.Itoa(p.Line))
		if p.Column > 0 {
			b.WriteString(":" + strconv.Itoa(p.Column))
		}
	}
	b.WriteString(": ")
	if p.Env != "" {
		b.WriteString("$" + p.Env + ": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		if p.Set {
			b.WriteString(" = " + quoteIfNeeded(p.Value))
		}
		b.WriteString(": ")
	}
	b.WriteString(p.Rule)
	return b.String()
}

// quoteIfNeeded quotes a value that would otherwise read ambiguously:
// empty, or with spaces at its ends.
func quoteIfNeeded(s string) string {
	if s == "" || strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	return s
}

// An Error holds every problem found in a configuration file, in the order
// they appear in it.
type Error struct {
	File     string
	Problems []*Problem
}

// Error lists the problems, one a line.
func (e *Error) Error() string {
	var b strings.Builder
	if len(e.Problems) == 1 {
		fmt.Fprintf(&b, "config: 1 problem in %s:", e.File)
	} else {
		fmt.Fprintf(&b, "config: %d problems in %s:", len(e.Problems), e.File)
	}
	for _, p := range e.Problems {
		b.WriteString("\n\t" + p.Error())
	}
	return b.String()
}

// Unwrap returns the problems, so that errors.As finds a *Problem.
func (e *Error) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}
