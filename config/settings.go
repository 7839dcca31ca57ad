package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
)

// A setting is one key that a pool or an actor accepts.
type setting[C any] struct {
	key    string // as written in the file, such as "max_objects"
	goName string // the Go field, as Validate names it, such as "MaxObjects"
	// parse sets the field from its written value, or returns the rule
	// the value breaks. A number too far from zero for the field's type
	// sets the field to the nearest that the type holds, and returns the
	// type's range and that nearest value as Validate writes it: the
	// field's own rules, which Validate checks, say more — max_objects
	// "must be between 1 and 1048576" — and the type's range is the rule
	// only where they find nothing wrong.
	parse func(c *C, value string) (rule, nearest string)
	// typ is what YAML must read a file's value as, for a number or a
	// boolean; nil for a setting whose values are strings, such as a
	// duration.
	typ *yamlType
	// sub holds the settings of a nested mapping, such as backoff's.
	sub []setting[C]
}

var poolSettings = []setting[actorpool.Config]{
	intSetting("max_objects", "MaxObjects", func(c *actorpool.Config) *int { return &c.MaxObjects }),
	intSetting("min_idle", "MinIdle", func(c *actorpool.Config) *int { return &c.MinIdle }),
	intSetting("min_objects", "MinObjects", func(c *actorpool.Config) *int { return &c.MinObjects }),
	durationSetting("max_idle_time", "MaxIdleTime", func(c *actorpool.Config) *time.Duration { return &c.MaxIdleTime }),
	durationSetting("max_lifetime", "MaxLifetime", func(c *actorpool.Config) *time.Duration { return &c.MaxLifetime }),
	durationSetting("lifetime_jitter", "LifetimeJitter", func(c *actorpool.Config) *time.Duration { return &c.LifetimeJitter }),
	intSetting("max_queue_size", "MaxQueueSize", func(c *actorpool.Config) *int { return &c.MaxQueueSize }),
	durationSetting("create_timeout", "CreateTimeout", func(c *actorpool.Config) *time.Duration { return &c.CreateTimeout }),
	durationSetting("test_timeout", "TestTimeout", func(c *actorpool.Config) *time.Duration { return &c.TestTimeout }),
	durationSetting("validation_interval", "ValidationInterval", func(c *actorpool.Config) *time.Duration { return &c.ValidationInterval }),
	durationSetting("leak_threshold", "LeakThreshold", func(c *actorpool.Config) *time.Duration { return &c.LeakThreshold }),
	boolSetting("trace_acquires", "TraceAcquires", func(c *actorpool.Config) *bool { return &c.TraceAcquires }),
	durationSetting("handoff_after", "HandoffAfter", func(c *actorpool.Config) *time.Duration { return &c.HandoffAfter }),
	boolSetting("fifo", "FIFO", func(c *actorpool.Config) *bool { return &c.FIFO }),
}

var actorSettings = []setting[Actor]{
	intSetting("workers", "Workers", func(a *Actor) *int { return &a.Workers }),
	intSetting("min_workers", "MinWorkers", func(a *Actor) *int { return &a.MinWorkers }),
	intSetting("max_workers", "MaxWorkers", func(a *Actor) *int { return &a.MaxWorkers }),
	durationSetting("keep_alive", "KeepAlive", func(a *Actor) *time.Duration { return &a.KeepAlive }),
	intSetting("capacity", "Capacity", func(a *Actor) *int { return &a.Capacity }),
	{key: "overflow", goName: "Overflow", parse: parseOverflow},
	intSetting("max_attempts", "MaxAttempts", func(a *Actor) *int { return &a.MaxAttempts }),
	{key: "backoff", goName: "Backoff", sub: []setting[Actor]{
		durationSetting("initial", "Backoff.Initial", func(a *Actor) *time.Duration { return &a.Backoff.Initial }),
		durationSetting("max", "Backoff.Max", func(a *Actor) *time.Duration { return &a.Backoff.Max }),
		floatSetting("multiplier", "Backoff.Multiplier", func(a *Actor) *float64 { return &a.Backoff.Multiplier }),
		floatSetting("jitter", "Backoff.Jitter", func(a *Actor) *float64 { return &a.Backoff.Jitter }),
	}},
	durationSetting("timeout", "Timeout", func(a *Actor) *time.Duration { return &a.Timeout }),
	durationSetting("grace", "Grace", func(a *Actor) *time.Duration { return &a.Grace }),
	boolSetting("dead_letter_rejected", "DeadLetterRejected", func(a *Actor) *bool { return &a.DeadLetterRejected }),
	durationSetting("lease", "Lease", func(a *Actor) *time.Duration { return &a.Lease }),
	durationSetting("heartbeat", "Heartbeat", func(a *Actor) *time.Duration { return &a.Heartbeat }),
}

// A yamlType is what YAML must read a setting's value as in a file, for a
// number or a boolean: a quoted "8" is a string to YAML and to every
// program that reads the file with it, and taking it for a number would
// hide a mistake, such as a value meant for another setting. A plain value
// is left to the setting's parse, whose syntax is YAML's; a tagged one,
// such as !!str 8, must have one of tags. A value of any other type breaks
// rule.
type yamlType struct {
	tags []string
	rule string
}

var (
	wholeNumber = &yamlType{[]string{"!!int"}, "must be a whole number, such as 8"}
	number      = &yamlType{[]string{"!!int", "!!float"}, "must be a number, such as 0.2"}
	trueOrFalse = &yamlType{[]string{"!!bool"}, "must be true or false"}
)

// check returns the rule that the scalar n breaks by its YAML type, or "".
func (t *yamlType) check(n *yaml.Node) string {
	switch {
	case t == nil:
	case n.Style&yaml.TaggedStyle != 0:
		if !slices.Contains(t.tags, n.ShortTag()) {
			return t.rule + ", not a value tagged " + n.Tag
		}
	case quoted(n):
		return t.rule + ", not a string: write it without quotes"
	}
	return ""
}

func intSetting[C any](key, goName string, field func(*C) *int) setting[C] {
	return setting[C]{key: key, goName: goName, typ: wholeNumber, parse: func(c *C, v string) (string, string) {
		if leadingZero.MatchString(v) {
			return leadingZeroRule(v, true), ""
		}
		// Base 0 reads what YAML does for integers: 1_000, 0x10, 0o10.
		n, err := strconv.ParseInt(v, 0, strconv.IntSize)
		if errors.Is(err, strconv.ErrRange) {
			*field(c) = int(n) // the nearest int
			if n < 0 {
				return fmt.Sprintf("is out of range: must not be below %d", n), fmt.Sprint(n)
			}
			return fmt.Sprintf("is out of range: must not exceed %d", n), fmt.Sprint(n)
		}
		if err != nil {
			return wholeNumber.rule, ""
		}
		*field(c) = int(n)
		return "", ""
	}}
}

// leadingZero matches an integer written with a leading zero, such as
// 010: YAML 1.1, and yaml.v3 with it, reads it as octal, 8, and YAML 1.2 as
// 10. Either reading would surprise those who expect the other, so it is
// refused, and the rule offers the spellings that cannot be misread.
var leadingZero = regexp.MustCompile(`^[-+]?0[0-9_]+$`)

// leadingZeroRule is the rule that v, matched by leadingZero, breaks. It
// offers v in octal, such as 0o10, only if octal reports that the setting
// reads it.
func leadingZeroRule(v string, octal bool) string {
	sign, digits := "", v
	if v[0] == '-' || v[0] == '+' {
		sign, digits = v[:1], v[1:]
	}
	digits = strings.TrimLeft(digits, "0_")
	if digits == "" {
		digits = "0"
	}
	rule := fmt.Sprintf("must not start with 0, which marks octal in YAML 1.1 but not in 1.2: write %s%s", sign, digits)
	// 0o7 is 7: offered only where it differs.
	if octal && strings.Trim(digits, "01234567_") == "" && len(strings.ReplaceAll(digits, "_", "")) > 1 {
		rule += fmt.Sprintf(", or %s0o%s for octal", sign, digits)
	}
	return rule
}

func durationSetting[C any](key, goName string, field func(*C) *time.Duration) setting[C] {
	return setting[C]{key: key, goName: goName, parse: func(c *C, v string) (string, string) {
		d, err := time.ParseDuration(v)
		if err != nil && durationSyntax.MatchString(v) {
			// Written as a duration, but too long for one.
			d = math.MaxInt64
			if strings.HasPrefix(v, "-") {
				d = math.MinInt64
			}
			*field(c) = d
			if d < 0 {
				return "is out of range: must not be below " + d.String(), d.String()
			}
			return "is out of range: must not exceed " + d.String(), d.String()
		}
		if err != nil {
			return "must be a duration with a unit, such as 5s, 250ms or 1m30s", ""
		}
		*field(c) = d
		return "", ""
	}}
}

// durationSyntax matches what time.ParseDuration reads, whatever the
// magnitude, so that a value it refuses can be told too long rather than
// malformed.
var durationSyntax = regexp.MustCompile(`^[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+$`)

func boolSetting[C any](key, goName string, field func(*C) *bool) setting[C] {
	return setting[C]{key: key, goName: goName, typ: trueOrFalse, parse: func(c *C, v string) (string, string) {
		switch strings.ToLower(v) {
		case "true":
			*field(c) = true
		case "false":
			*field(c) = false
		default:
			return trueOrFalse.rule, ""
		}
		return "", ""
	}}
}

func floatSetting[C any](key, goName string, field func(*C) *float64) setting[C] {
	return setting[C]{key: key, goName: goName, typ: number, parse: func(c *C, v string) (string, string) {
		if leadingZero.MatchString(v) {
			return leadingZeroRule(v, false), "" // 010 is an integer to YAML, read as 8
		}
		f, err := strconv.ParseFloat(v, 64)
		if errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
			// A number, but too large for one, as intSetting says; the
			// nearest float64 is finite, as Validate expects.
			f = math.Copysign(math.MaxFloat64, f)
			*field(c) = f
			if f < 0 {
				return fmt.Sprintf("is out of range: must not be below %v", f), fmt.Sprint(f)
			}
			return fmt.Sprintf("is out of range: must not exceed %v", f), fmt.Sprint(f)
		}
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return number.rule, ""
		}
		*field(c) = f
		return "", ""
	}}
}

// overflowNames maps what a file may write to the policies; the first
// name of each is the one the rule suggests.
var overflowNames = []struct {
	names  []string
	policy actor.Overflow
}{
	{[]string{"block"}, actor.OverflowBlock},
	{[]string{"reject"}, actor.OverflowReject},
	{[]string{"drop-oldest", "drop_oldest", "drop oldest"}, actor.OverflowDropOldest},
	{[]string{"drop-newest", "drop_newest", "drop newest"}, actor.OverflowDropNewest},
}

func parseOverflow(a *Actor, v string) (string, string) {
	for _, o := range overflowNames {
		if slices.Contains(o.names, strings.ToLower(v)) {
			a.Overflow = o.policy
			return "", ""
		}
	}
	return "must be one of block, reject, drop-oldest, drop-newest", ""
}

// A leaf is a setting with a value, flattened out of its nesting.
type leaf[C any] struct {
	path   string // "backoff.initial"
	goName string
	parse  func(c *C, value string) (rule, nearest string)
}

func leaves[C any](settings []setting[C], prefix string) []leaf[C] {
	var out []leaf[C]
	for _, s := range settings {
		if s.sub != nil {
			out = append(out, leaves(s.sub, prefix+s.key+".")...)
			continue
		}
		out = append(out, leaf[C]{prefix + s.key, s.goName, s.parse})
	}
	return out
}

// goNames returns a replacer of the Go field names in the rules that
// Validate writes by the keys a file uses, so that a rule such as "must not
// exceed MaxObjects (8)" reads "must not exceed max_objects (8)".
func goNames[C any](settings []setting[C], prefix string) []string {
	var pairs [][2]string
	var walk func([]setting[C], string)
	walk = func(ss []setting[C], prefix string) {
		for _, s := range ss {
			pairs = append(pairs, [2]string{s.goName, prefix + s.key})
			if s.sub != nil {
				walk(s.sub, prefix+s.key+".")
			}
		}
	}
	walk(settings, prefix)
	// Longest first, so that Backoff.Max is not read as Backoff then .Max.
	slices.SortFunc(pairs, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	var out []string
	for _, p := range pairs {
		out = append(out, p[0], p[1])
	}
	return out
}

var (
	poolRules  = strings.NewReplacer(goNames(poolSettings, "")...)
	actorRules = strings.NewReplacer(goNames(actorSettings, "")...)
)

// pathOf returns the key path of the Go field goName, or "" if it has none.
func pathOf[C any](settings []setting[C], goName string) string {
	for _, s := range settings {
		if s.goName == goName {
			return s.key
		}
		if s.sub != nil {
			if p := pathOf(s.sub, goName); p != "" {
				return s.key + "." + p
			}
		}
	}
	return ""
}
