package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/actorpool/actorpool"
)

// Load reads the configuration file at path, applies the overrides found in
// the process's environment, and checks the result. It returns every problem
// it finds as an [*Error].
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data, os.Environ())
}

// Parse is Load for a file already read: data is its content, path names
// it in problems, and environ holds the environment as "KEY=value" strings,
// as os.Environ returns it; nil means no overrides.
func Parse(path string, data []byte, environ []string) (*File, error) {
	p := &parser{file: &File{Path: path}, env: parseEnviron(environ), fuel: fuelPerByte*len(data) + fuelBase}
	p.parse(data)
	if len(p.problems) > 0 {
		slices.SortStableFunc(p.problems, func(a, b *Problem) int {
			if a.Line != b.Line {
				return a.Line - b.Line
			}
			return a.Column - b.Column
		})
		return nil, &Error{File: path, Problems: p.problems}
	}
	return p.file, nil
}

type parser struct {
	file     *File
	env      map[string]string
	problems []*Problem
	entries  []*entry            // in the order of the file
	fuel     int                 // the work left that the file may cost; see spend
	out      bool                // the fuel ran out, or the problems reached maxProblems: stop
	merging  map[*yaml.Node]bool // the mappings that merge keys are bringing in now
}

// The fuel of a file: fuelPerByte for each of its bytes, and fuelBase.
// Without aliases a file costs less than its size; with them, a mapping
// written once can be brought in many times, each time costing its size
// again, so that a small file could take time and give problems in the
// square of its size. The fuel bounds both to a multiple of it. A file
// that merges a mapping of every setting into each of a hundred entries
// costs less than 20 times its size.
const (
	fuelPerByte = 32
	fuelBase    = 1 << 16
)

// spend takes cost from the fuel and reports whether the parser may go on:
// once the fuel runs out, it reports one problem, at node n, and stops.
func (p *parser) spend(n *yaml.Node, cost int) bool {
	if p.out {
		return false
	}
	if p.fuel -= cost; p.fuel >= 0 {
		return true
	}
	p.out = true
	p.problem(nodeAt(n), "", nil, fmt.Sprintf("the file's aliases and merge keys (<<) bring in more than %d times its size: merge fewer or smaller mappings", fuelPerByte))
	return false
}

// cost is what looking at key and its value costs.
func cost(key, value *yaml.Node) int {
	c := 1 + len(key.Value)
	if value != nil && value.Kind == yaml.ScalarNode {
		c += len(value.Value)
	}
	return c
}

// where is the origin of a value: a node of the file, or a variable.
type where struct {
	line, column int
	env          string
	value        *string // the value written there, if any
}

// maxProblems is how many problems a file gets at most: past that many, a
// file is not a configuration with mistakes in it, and more of them would
// only take time and bury the first.
const maxProblems = 1000

func (p *parser) problem(at where, field string, value *string, rule string) {
	if len(p.problems) >= maxProblems {
		if !p.out {
			p.out = true
			p.problems = append(p.problems, &Problem{File: p.file.Path, Line: at.line, Column: at.column,
				Rule: fmt.Sprintf("more than %d problems: the rest of the file was not checked", maxProblems)})
		}
		return
	}
	pr := &Problem{File: p.file.Path, Line: at.line, Column: at.column, Env: at.env, Field: field, Rule: rule}
	if value != nil {
		pr.Value, pr.Set = *value, true
	}
	p.problems = append(p.problems, pr)
}

func nodeAt(n *yaml.Node) where { return where{line: n.Line, column: n.Column} }

// yamlLine finds the line in a syntax error from the YAML parser, which
// reports it only in its message, as "yaml: line 3: ...".
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *parser) parse(data []byte) {
	// yaml.Unmarshal reads the first document and drops the rest without
	// a word: a decoder tells a second one, which is reported rather than
	// ignored with its pools, actors and mistakes.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, next yaml.Node
	err := dec.Decode(&doc)
	if err == nil {
		err = dec.Decode(&next)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		at, msg := where{}, err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			at.line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		p.problem(at, "", nil, "not valid YAML: "+strings.TrimPrefix(msg, "yaml: "))
		return
	}
	if len(next.Content) > 0 && !isNull(next.Content[0]) { // an empty one, such as a --- before comments, holds nothing to lose
		p.problem(nodeAt(next.Content[0]), "", nil, "the file holds a second YAML document (after ---), which would be ignored: declare every pool and actor in one document")
	}
	if len(doc.Content) == 0 {
		p.problem(where{line: 1}, "", nil, "the file is empty: declare pools under \"pools:\" and actors under \"actors:\"")
		return
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		p.problem(nodeAt(root), "", nil, "the file must be a mapping with the keys \"pools\" and \"actors\"")
		return
	}
	sections := []string{"pools", "actors"}
	p.mapping(root, "", func(key, value *yaml.Node) {
		switch key.Value {
		case "pools":
			p.section(key.Value, value, p.pool)
		case "actors":
			p.section(key.Value, value, p.actor)
		default:
			if strings.HasPrefix(key.Value, "x-") {
				return // a place for anchors, such as x-defaults: &defaults
			}
			p.problem(nodeAt(key), key.Value, nil, unknown("section", key.Value, sections)+
				" (a key starting with x- is ignored, to hold anchors)")
		}
	})
	if p.out {
		return // the entries were cut short: checking them would only add noise
	}
	p.override()
	for _, e := range p.entries {
		e.check()
	}
	if len(p.entries) == 0 && len(p.problems) == 0 {
		p.problem(nodeAt(root), "", nil, "the file declares no pools and no actors")
	}
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// mapping calls fn for each key and value of mapping m, in order, with the
// entries a merge key (<<) brings in first, so that the mapping's own
// entries override them. It reports keys that are not scalars and keys
// given twice; path names m in those problems.
func (p *parser) mapping(m *yaml.Node, path string, fn func(key, value *yaml.Node)) {
	var merged, own [][2]*yaml.Node
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, value := m.Content[i], resolve(m.Content[i+1])
		if !p.spend(key, cost(key, value)) {
			return
		}
		if key.Kind != yaml.ScalarNode {
			p.problem(nodeAt(key), path, nil, "keys must be plain names")
			continue
		}
		if isMergeKey(key) {
			merged = append(merged, p.mergeEntries(key, value, path)...)
			continue
		}
		if first, ok := seen[key.Value]; ok {
			p.problem(nodeAt(key), join(path, key.Value), nil, fmt.Sprintf("is given twice (first on line %d)", first.Line))
			continue
		}
		seen[key.Value] = key
		own = append(own, [2]*yaml.Node{key, value})
	}
	for _, kv := range merged {
		if !p.spend(kv[0], cost(kv[0], kv[1])) {
			return
		}
		if _, ok := seen[kv[0].Value]; !ok {
			seen[kv[0].Value] = kv[0]
			fn(kv[0], kv[1])
		}
	}
	for _, kv := range own {
		fn(kv[0], kv[1])
	}
}

// mergeEntries returns the entries that the merge key key, whose value is
// value, brings in: those of one mapping, or of a list of mappings where
// the first to give a key wins.
func (p *parser) mergeEntries(key, value *yaml.Node, path string) [][2]*yaml.Node {
	var maps []*yaml.Node
	switch value.Kind {
	case yaml.MappingNode:
		maps = []*yaml.Node{value}
	case yaml.SequenceNode:
		for _, n := range value.Content {
			maps = append(maps, resolve(n))
		}
	}
	var out [][2]*yaml.Node
	seen := map[string]bool{}
	for _, m := range maps {
		if m.Kind != yaml.MappingNode {
			p.problem(nodeAt(m), path, nil, "a merge key (<<) must name a mapping, such as *defaults")
			continue
		}
		if p.merging[m] {
			// An alias can name a mapping from within it: followed, it
			// would merge for ever.
			p.problem(nodeAt(key), path, nil, "a merge key (<<) must not bring in the mapping it is in")
			continue
		}
		for _, kv := range p.merged(m, path) {
			if !seen[kv[0].Value] {
				seen[kv[0].Value] = true
				out = append(out, kv)
			}
		}
	}
	if len(maps) == 0 {
		p.problem(nodeAt(value), path, nil, "a merge key (<<) must name a mapping, such as *defaults")
	}
	return out
}

// merged returns the entries of m, a mapping that a merge key brings in:
// its own, then those that its own merge keys bring in, as YAML merges an
// anchor that merges another, so that the first of a key wins.
func (p *parser) merged(m *yaml.Node, path string) [][2]*yaml.Node {
	if p.merging == nil {
		p.merging = map[*yaml.Node]bool{}
	}
	p.merging[m] = true
	defer delete(p.merging, m)
	var own, merged [][2]*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if !p.spend(k, 1+len(k.Value)) {
			return nil
		}
		if k.Kind != yaml.ScalarNode {
			continue
		}
		if isMergeKey(k) {
			merged = append(merged, p.mergeEntries(k, resolve(m.Content[i+1]), path)...)
			continue
		}
		own = append(own, [2]*yaml.Node{k, resolve(m.Content[i+1])})
	}
	return append(own, merged...)
}

// isMergeKey reports whether k is YAML's merge key, <<.
func isMergeKey(k *yaml.Node) bool { return k.Tag == "!!merge" || k.Value == "<<" }

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// section reads "pools" or "actors": a mapping of names to settings.
func (p *parser) section(name string, value *yaml.Node, entry func(key, value *yaml.Node)) {
	if isNull(value) {
		return
	}
	if value.Kind != yaml.MappingNode {
		p.problem(nodeAt(value), name, nil, "must be a mapping of names to settings")
		return
	}
	p.mapping(value, name, func(key, value *yaml.Node) {
		if rule := checkName(key.Value); rule != "" {
			p.problem(nodeAt(key), join(name, key.Value), nil, rule)
			return
		}
		if !isNull(value) && value.Kind != yaml.MappingNode {
			p.problem(nodeAt(value), join(name, key.Value), nil, "must be a mapping of settings, such as {max_objects: 8}")
			return
		}
		entry(key, value)
	})
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// quoted reports whether scalar n is written in quotes.
func quoted(n *yaml.Node) bool {
	return n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0
}

// checkName returns the rule a pool's or actor's name breaks, or "". Names
// appear in environment variables and metric labels, so they are kept to
// what reads well in both.
func checkName(name string) string {
	if name == "" {
		return "a name must not be empty"
	}
	for i, r := range name {
		letter := 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
		if i == 0 && !letter {
			return "a name must start with a letter"
		}
		if !letter && !('0' <= r && r <= '9') && r != '_' && r != '-' {
			return fmt.Sprintf("a name may hold letters, digits, '_' and '-', not %q", r)
		}
	}
	return ""
}

// origins records where each setting of one entry came from, by Go field
// name, so that Validate's findings can be placed.
type origins map[string]where

// An entry is a pool or an actor read from the file, waiting for its
// overrides and its validation.
type entry struct {
	kind  string // "POOL" or "ACTOR", as in the variables' names
	key   *yaml.Node
	path  string // "pools.redis"
	from  origins
	bad   map[string]bool // Go names of settings whose value did not parse
	envs  []envSetting
	check func() // validates the entry and adds it to the file

	// outOfRange holds, by Go name, the settings whose value is too far
	// from zero for their type.
	outOfRange map[string]outOfRange
}

// An outOfRange is a setting's value too far from zero for its type, for
// which the field holds the nearest value the type does.
type outOfRange struct {
	rule    string // the type's range: the rule if Validate finds none of the field's
	nearest string // the value the field holds, as Validate writes it
}

// An envSetting is a setting that a variable can override.
type envSetting struct {
	path, goName string // "backoff.initial", "Backoff.Initial"
	set          func(value string) (rule, nearest string)
}

func envSettings[C any](all []leaf[C], c *C) []envSetting {
	out := make([]envSetting, len(all))
	for i, l := range all {
		out[i] = envSetting{l.path, l.goName, func(v string) (string, string) { return l.parse(c, v) }}
	}
	return out
}

func (p *parser) pool(key, value *yaml.Node) {
	e := &entry{kind: "POOL", key: key, path: join("pools", key.Value), from: origins{}, bad: map[string]bool{}, outOfRange: map[string]outOfRange{}}
	cfg := &actorpool.Config{Name: key.Value}
	settingsOf(p, value, e.path, poolSettings, cfg, e)
	e.envs = envSettings(leaves(poolSettings, ""), cfg)
	e.check = func() {
		p.validated(e, cfg.Validate(), poolRules, func(goName string) string { return pathOf(poolSettings, goName) })
		p.file.Pools = append(p.file.Pools, Pool{Name: key.Value, Line: key.Line, Config: *cfg})
	}
	p.entries = append(p.entries, e)
}

func (p *parser) actor(key, value *yaml.Node) {
	e := &entry{kind: "ACTOR", key: key, path: join("actors", key.Value), from: origins{}, bad: map[string]bool{}, outOfRange: map[string]outOfRange{}}
	a := &Actor{Name: key.Value, Line: key.Line}
	settingsOf(p, value, e.path, actorSettings, a, e)
	e.envs = envSettings(leaves(actorSettings, ""), a)
	e.check = func() {
		cfg := ActorConfig[struct{}](*a)
		p.validated(e, errors.Join(cfg.Validate(), checkLeases(*a)), actorRules, func(goName string) string { return pathOf(actorSettings, goName) })
		p.file.Actors = append(p.file.Actors, *a)
		if p.file.placed == nil {
			p.file.placed = map[string]*entry{}
		}
		p.file.placed[a.Name] = e
	}
	p.entries = append(p.entries, e)
}

// settingsOf reads the settings of one entry from mapping m into c.
func settingsOf[C any](p *parser, m *yaml.Node, path string, settings []setting[C], c *C, e *entry) {
	if isNull(m) {
		return
	}
	var keys []string
	for _, s := range settings {
		keys = append(keys, s.key)
	}
	p.mapping(m, path, func(key, value *yaml.Node) {
		i := slices.IndexFunc(settings, func(s setting[C]) bool { return s.key == key.Value })
		if i < 0 {
			p.problem(nodeAt(key), join(path, key.Value), nil, unknown("setting", key.Value, keys))
			return
		}
		s := settings[i]
		field := join(path, s.key)
		if s.sub != nil {
			if value.Kind != yaml.MappingNode && !isNull(value) {
				p.problem(nodeAt(value), field, nil, "must be a mapping of settings, such as {initial: 100ms, max: 5s}")
				return
			}
			e.from[s.goName] = nodeAt(key)
			settingsOf(p, value, field, s.sub, c, e)
			return
		}
		at := nodeAt(value)
		e.from[s.goName] = at
		if value.Kind != yaml.ScalarNode || isNull(value) {
			e.bad[s.goName] = true
			p.problem(at, field, nil, "must be a single value, not "+kindName(value))
			return
		}
		at.value = &value.Value
		e.from[s.goName] = at
		if rule := s.typ.check(value); rule != "" {
			e.bad[s.goName] = true
			written := value.Value
			if quoted(value) {
				written = strconv.Quote(written) // the quotes are what is wrong: show them
			}
			p.problem(at, field, &written, rule)
			return
		}
		switch rule, nearest := s.parse(c, value.Value); {
		case nearest != "":
			e.outOfRange[s.goName] = outOfRange{rule, nearest}
		case rule != "":
			e.bad[s.goName] = true
			p.problem(at, field, &value.Value, rule)
		}
	})
}

func kindName(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "empty"
	}
	return "a " + n.ShortTag()
}
