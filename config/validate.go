package config

import (
	"errors"
	"strings"

	"github.com/actorpool/actorpool"
)

// validated turns what an entry's Validate returned into problems placed
// where the setting at fault is written: its value, the variable that set
// it, or the entry's name when it was left out.
func (p *parser) validated(e *entry, err error, rules *strings.Replacer, pathOf func(goName string) string) {
	if err == nil {
		return
	}
	for _, err := range flatten(err) {
		// actorpool.ConfigError and actor.ConfigError are one type.
		var ce *actorpool.ConfigError
		path := ""
		if errors.As(err, &ce) {
			path = pathOf(ce.Field)
		}
		if path == "" {
			// Not a setting's: about the entry, or a field the file has
			// no key for, which only the error's own words can name.
			p.problem(nodeAt(e.key), e.path, nil, err.Error())
			continue
		}
		goName, rule := ce.Field, ce.Rule
		field := join(e.path, path)
		if e.bad[goName] {
			continue // already reported: its value did not parse
		}
		rule = rules.Replace(rule)
		at, set := e.from[goName]
		if !set {
			p.problem(nodeAt(e.key), field, nil, "not set, but "+rule)
			continue
		}
		p.problem(at, field, at.value, rule)
	}
}

// flatten returns the errors that err joins, those of joins within it
// included, in order: a Validate may join the findings of several checks.
func flatten(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}
