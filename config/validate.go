package config

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/actorpool/actorpool"
)

// validated turns what an entry's Validate returned into problems placed
// where the setting at fault is written: its value, the variable that set
// it, or the entry's name when it was left out. A setting whose value was
// out of range for its type is reported by the rule Validate gives it, its
// own range, or by its type's if Validate gives none; a rule that names
// the nearest value the setting holds instead names the value written.
func (p *parser) validated(e *entry, err error, rules *strings.Replacer, pathOf func(goName string) string) {
	outOfRange := slices.Sorted(maps.Keys(e.outOfRange))
	var pairs []string
	for _, goName := range outOfRange {
		pairs = append(pairs, e.outOfRange[goName].nearest, *e.from[goName].value)
	}
	written := strings.NewReplacer(pairs...)
	found := map[string]bool{}
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
		found[goName] = true
		rule = written.Replace(rules.Replace(rule))
		at, set := e.from[goName]
		if !set {
			p.problem(nodeAt(e.key), field, nil, "not set, but "+rule)
			continue
		}
		p.problem(at, field, at.value, rule)
	}
	for _, goName := range outOfRange {
		if !found[goName] {
			at := e.from[goName]
			p.problem(at, join(e.path, pathOf(goName)), at.value, e.outOfRange[goName].rule)
		}
	}
}

// flatten returns the errors that err joins, those of joins within it
// included, in order: a Validate may join the findings of several checks.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
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
