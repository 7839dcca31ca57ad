package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/actorpool/actorpool/internal/errs"
)

// defaultLease is the lease of pgactor and jsactor when none is set; the
// heartbeat's rule is read against it.
const defaultLease = 5 * time.Second

// minLease is the shortest lease that either backend takes, pgactor's: a
// shorter one is refused by both. JetStream's own, longer, minimum is
// jsactor's rule, placed with ActorProblems.
const minLease = 100 * time.Millisecond

// checkLeases checks the settings of a durable actor that the rules of
// actor.Config do not cover, by the rules pgactor and jsactor share.
// What only one backend asks, such as its shortest lease, is for its own
// Validate, placed with [File.ActorProblems].
func checkLeases(a Actor) error {
	check := errs.NewChecker("config")
	errs.NotNegative(check, "Lease", a.Lease, "the durable actor's default, "+defaultLease.String())
	errs.NotNegative(check, "Heartbeat", a.Heartbeat, "a third of the Lease")
	if a.Lease > 0 && a.Lease < minLease {
		check.Bad("Lease", a.Lease, fmt.Sprintf("must be at least %v (zero means the durable actor's default, %v)", minLease, defaultLease))
	}
	lease := a.Lease
	if lease <= 0 {
		lease = defaultLease
	}
	// Heartbeat > lease/2 is 2×Heartbeat > lease without the overflow of
	// doubling a huge heartbeat.
	if a.Heartbeat > 0 && a.Heartbeat > lease/2 {
		check.Bad("Heartbeat", a.Heartbeat, fmt.Sprintf("must not exceed half the Lease (%v), so that a lease is renewed before it runs out", lease))
	}
	return check.Err()
}

// ActorProblems places in the file the problems that err reports about the
// actor declared under name, as Load places its own, and returns them as
// an [*Error]; nil when err is nil. err is what the Validate of a Config
// that the actor's settings were mapped onto returned — a durable actor's,
// such as jsactor.Config's, whose rules Load cannot know: each
// *actorpool.ConfigError in it is placed at the setting its Field names, or
// at the actor's name for a field the file has no key for, and its rule
// reads in the file's keys. Any other error is placed at the actor's name.
func (f *File) ActorProblems(name string, err error) error {
	if err == nil {
		return nil
	}
	e, ok := f.placed[name]
	if !ok {
		return fmt.Errorf("config: %s declares no actor named %q", f.Path, name)
	}
	p := &parser{file: &File{Path: f.Path}}
	p.validated(e, err, actorRules, func(goName string) string { return pathOf(actorSettings, goName) })
	if len(p.problems) == 0 {
		// Every finding was about a value that did not parse, which Load
		// reported: not a file that Load returned.
		return errors.New("config: " + err.Error())
	}
	slices.SortStableFunc(p.problems, func(a, b *Problem) int { return cmp.Or(a.Line-b.Line, a.Column-b.Column) })
	return &Error{File: f.Path, Problems: p.problems}
}
