package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/actorpool/actorpool/config"
)

const configHelp = `Usage: actorpool config check [--jetstream] FILE...

Check reads each configuration file, applies the overrides in the
environment (ACTORPOOL_POOL_<POOL>_<SETTING>, ACTORPOOL_ACTOR_<ACTOR>_<SETTING>)
and prints every problem it finds with its file, line and column, the
setting, its value and the rule it breaks:

  app.yaml:5:15: pools.redis.min_idle = 40: must not exceed max_objects (16)

A file declares pools under "pools:" and actors under "actors:"; see
examples/actorpool.yaml for one with every setting.

With --jetstream, check also checks each actor as a durable actor on NATS
JetStream (package jsactor, as the demo's --jetstream runs it) would take
it: by JetStream's own rules, such as a lease of at least 500ms, and with
a fixed number of workers. The mailbox's settings (capacity, overflow,
dead_letter_rejected) mean nothing to a durable actor and are not checked.

Exit codes: 0 every file is fine, 1 a file has problems or cannot be read,
2 usage error.
`

func runConfig(args []string, stdout, stderr io.Writer) int {
	paths, jetstream, code := parseConfig(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	code = exitOK
	for _, path := range paths {
		f, err := config.Load(path)
		if err == nil && jetstream {
			err = checkJetStream(f)
		}
		var cerr *config.Error
		switch {
		case errors.As(err, &cerr):
			for _, p := range cerr.Problems {
				fmt.Fprintln(stdout, p)
			}
			fmt.Fprintf(stderr, "%s: %s\n", path, plural(len(cerr.Problems), "problem"))
			code = exitFailure
		case err != nil:
			fmt.Fprintf(stderr, "actorpool config check: %v\n", err)
			code = exitFailure
		default:
			fmt.Fprintf(stdout, "%s: ok: %s, %s\n", path, names(len(f.Pools), "pool", poolNames(f)), names(len(f.Actors), "actor", actorNames(f)))
		}
	}
	return code
}

// checkJetStream checks each actor of f as jsactor would take it, and
// returns the problems placed in the file.
func checkJetStream(f *config.File) error {
	var problems []*config.Problem
	for _, a := range f.Actors {
		_, err := jetstreamConfig(a)
		var cerr *config.Error
		switch perr := f.ActorProblems(a.Name, err); {
		case errors.As(perr, &cerr):
			problems = append(problems, cerr.Problems...)
		case perr != nil:
			return perr
		}
	}
	if len(problems) == 0 {
		return nil
	}
	slices.SortStableFunc(problems, func(a, b *config.Problem) int { return cmp.Or(a.Line-b.Line, a.Column-b.Column) })
	return &config.Error{File: f.Path, Problems: problems}
}

// parseConfig parses config's command line. It returns the files to
// check and whether to check them for JetStream, or the exit code to stop
// with, having said why; -1 to go on.
func parseConfig(args []string, stdout, stderr io.Writer) ([]string, bool, int) {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), configHelp) }
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return nil, false, code
	}
	switch {
	case fs.NArg() == 0:
		fmt.Fprint(stderr, "actorpool config: missing subcommand: 'check FILE...'\n\n"+configHelp)
		return nil, false, exitUsage
	case fs.Arg(0) != "check":
		fmt.Fprintf(stderr, "actorpool config: unknown subcommand %q; the one there is is 'check FILE...'\n", fs.Arg(0))
		return nil, false, exitUsage
	}
	check := flag.NewFlagSet("config check", flag.ContinueOnError)
	check.Usage = func() { fmt.Fprint(check.Output(), configHelp) }
	jetstream := check.Bool("jetstream", false, "check the actors as durable actors on JetStream too")
	if code := parseFlags(check, fs.Args()[1:], stdout, stderr); code >= 0 {
		return nil, false, code
	}
	if check.NArg() == 0 {
		fmt.Fprint(stderr, "actorpool config check: name the files to check, such as examples/actorpool.yaml\n")
		return nil, false, exitUsage
	}
	return check.Args(), *jetstream, -1
}

func poolNames(f *config.File) []string {
	var s []string
	for _, p := range f.Pools {
		s = append(s, p.Name)
	}
	return s
}

func actorNames(f *config.File) []string {
	var s []string
	for _, a := range f.Actors {
		s = append(s, a.Name)
	}
	return s
}

func names(n int, what string, list []string) string {
	if n == 0 {
		return "no " + what + "s"
	}
	return plural(n, what) + " (" + strings.Join(list, ", ") + ")"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
