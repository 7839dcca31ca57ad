// Package names gives a small enumeration its names as text: the String,
// MarshalText and UnmarshalText of a code whose names are held in a table,
// so that every enumeration of the library reads, prints and decodes the
// same way.
package names

import (
	"fmt"
	"strconv"
	"strings"
)

// A Table holds the names of an enumeration of type E, indexed by code.
// Code 0 is the zero value, which has no name: a field left unset is not
// mistaken for the first code.
type Table[E ~uint8] struct {
	pkg   string   // the package that owns E, for errors
	kind  string   // what E is, in words, for errors
	typ   string   // E's Go name, for codes out of the table
	names []string // names[0] is unused
}

// New returns the table of names for E, whose codes are 1, 2, ... in the
// order given. pkg and kind name the enumeration in errors, as in
// `actor: unknown dead-letter reason "x"`; typ is E's Go name, as in
// "Reason(9)".
func New[E ~uint8](pkg, kind, typ string, names ...string) Table[E] {
	return Table[E]{pkg: pkg, kind: kind, typ: typ, names: append([]string{""}, names...)}
}

// String returns the name of e, or typ(e) for a code without one.
func (t Table[E]) String(e E) string {
	if t.known(e) {
		return t.names[e]
	}
	return t.typ + "(" + strconv.Itoa(int(e)) + ")"
}

// Marshal returns the name of e as text, or an error for a code without
// one, so that nothing unreadable is written.
func (t Table[E]) Marshal(e E) ([]byte, error) {
	if !t.known(e) {
		return nil, fmt.Errorf("%s: cannot encode unknown %s", t.pkg, t.String(e))
	}
	return []byte(t.names[e]), nil
}

// Unmarshal returns the code whose name is text, or an error that names
// those there are.
func (t Table[E]) Unmarshal(text []byte) (E, error) {
	for i, name := range t.names {
		if i > 0 && name == string(text) {
			return E(i), nil
		}
	}
	quoted := make([]string, len(t.names)-1)
	for i, name := range t.names[1:] {
		quoted[i] = strconv.Quote(name)
	}
	return 0, fmt.Errorf("%s: unknown %s %q; want one of %s", t.pkg, t.kind, text, strings.Join(quoted, ", "))
}

func (t Table[E]) known(e E) bool { return e > 0 && int(e) < len(t.names) }
