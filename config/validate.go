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
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, err := range errs {
		// actorpool.ConfigError and actor.ConfigError are one type.
		var ce *actorpool.ConfigError
		if !errors.As(err, &ce) {
			p.problem(nodeAt(e.key), e.path, nil, err.Error())
			continue
		}
		goName, rule := ce.Field, ce.Rule
		field := e.path
		if path := pathOf(goName); path != "" {
			field = join(e.path, path)
		}
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
