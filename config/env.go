package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// envPrefix starts every override variable.
const envPrefix = "ACTORPOOL_"

// parseEnviron keeps the variables of environ that may be overrides.
func parseEnviron(environ []string) map[string]string {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && (strings.HasPrefix(k, envPrefix+"POOL_") || strings.HasPrefix(k, envPrefix+"ACTOR_")) {
			env[k] = v
		}
	}
	return env
}

// envName turns a name from the file into its form in a variable's name:
// upper case, with an underscore for each character other than a letter or
// a digit.
func envName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
			return r
		}
		return '_'
	}, s)
}

// EnvVar returns the name of the variable that overrides setting of the
// pool or actor name, where kind is "pool" or "actor" and setting is written
// as in the file, with a dot for a nested one: EnvVar("actor", "audit",
// "backoff.initial") is "ACTORPOOL_ACTOR_AUDIT_BACKOFF_INITIAL".
func EnvVar(kind, name, setting string) string {
	return envPrefix + envName(kind) + "_" + envName(name) + "_" + envName(setting)
}

// override applies the variables that set settings of the entries, and
// reports those that name an entry but none of its settings, and names that
// two settings would share.
func (p *parser) override() {
	owner := map[string]string{} // variable → the setting it overrides
	for _, e := range p.entries {
		for _, s := range e.envs {
			name := EnvVar(e.kind, e.key.Value, s.path)
			field := join(e.path, s.path)
			if other, ok := owner[name]; ok {
				p.problem(nodeAt(e.key), field, nil, fmt.Sprintf(
					"cannot be overridden: $%s would also set %s; rename one of the two", name, other))
				continue
			}
			owner[name] = field
		}
	}
	for _, e := range p.entries {
		for _, s := range e.envs {
			name := EnvVar(e.kind, e.key.Value, s.path)
			value, ok := p.env[name]
			if !ok || owner[name] != join(e.path, s.path) {
				continue
			}
			// A variable's problems point at the value it replaced, or at
			// the entry's name when the file left the setting out.
			at := where{line: e.key.Line, column: e.key.Column, env: name}
			if prev, ok := e.from[s.goName]; ok {
				at.line, at.column = prev.line, prev.column
			}
			at.value = &value
			e.from[s.goName] = at
			e.bad[s.goName] = false
			delete(e.outOfRange, s.goName)
			switch rule, nearest := s.set(value); {
			case nearest != "":
				e.outOfRange[s.goName] = outOfRange{rule, nearest}
			case rule != "":
				e.bad[s.goName] = true
				p.problem(at, join(e.path, s.path), &value, rule)
			}
		}
	}
	// A variable that names no setting is reported against the entry whose
	// prefix it starts with; the longest, when entries such as "a" and
	// "a_max" share the start of their prefixes.
	var prefixes prefixTrie
	for _, e := range p.entries {
		prefixes.add(EnvVar(e.kind, e.key.Value, ""), e)
	}
	names := slices.Sorted(maps.Keys(p.env))
	for _, name := range names {
		if _, known := owner[name]; known {
			continue
		}
		best, prefix := prefixes.longest(name)
		if best == nil {
			continue // it may be meant for another file
		}
		var settings []string
		for _, s := range best.envs {
			settings = append(settings, envName(s.path))
		}
		rule := "the variable overrides no setting"
		if s := closest(strings.TrimPrefix(name, prefix), settings); s != "" {
			rule += "; did you mean $" + prefix + s + "?"
		} else {
			rule += "; the settings are " + strings.Join(settings, ", ")
		}
		p.problem(where{line: best.key.Line, column: best.key.Column, env: name}, best.path, nil, rule)
	}
}

// A prefixTrie holds the prefixes of the entries' variables, so that the
// longest that a variable's name starts with is found in time linear in
// the name, however many entries there are.
type prefixTrie struct {
	next  map[byte]*prefixTrie
	entry *entry // the entry whose prefix ends here, if one does
}

func (t *prefixTrie) add(prefix string, e *entry) {
	for i := 0; i < len(prefix); i++ {
		if t.next == nil {
			t.next = map[byte]*prefixTrie{}
		}
		n := t.next[prefix[i]]
		if n == nil {
			n = &prefixTrie{}
			t.next[prefix[i]] = n
		}
		t = n
	}
	if t.entry == nil { // two entries with one prefix are reported apart
		t.entry = e
	}
}

// longest returns the entry whose prefix is the longest that name starts
// with, and that prefix; nil if none does.
func (t *prefixTrie) longest(name string) (*entry, string) {
	var best *entry
	end := 0
	for i := 0; t != nil; i++ {
		if t.entry != nil {
			best, end = t.entry, i
		}
		if i == len(name) {
			break
		}
		t = t.next[name[i]]
	}
	return best, name[:end]
}
