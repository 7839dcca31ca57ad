package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/pgactor"
)

// TestActorProblems proves that the findings of a backend's Validate are
// placed where the file, or the environment, sets the setting at fault,
// with the rule in the file's keys; at the actor's name for a setting left
// out or one the file has no key for.
func TestActorProblems(t *testing.T) {
	doc := "actors:\n  audit:\n    workers: 2\n    max_attempts: 3\n    lease: 200ms\n  mail:\n"
	f, err := Parse("f.yaml", []byte(doc), []string{"ACTORPOOL_ACTOR_AUDIT_MAX_ATTEMPTS=4"})
	if err != nil {
		t.Fatal(err)
	}
	bad := func(field string, value any, rule string) error {
		return &actorpool.ConfigError{Field: field, Value: value, Rule: rule}
	}
	tests := []struct {
		name  string
		actor string
		err   error
		want  []string // the problems; nil for no error
		other string   // an error that is not an *Error, containing this
	}{
		{name: "nil", actor: "audit", err: nil},
		{name: "set in the file", actor: "audit",
			err:  errors.Join(bad("Lease", 200*time.Millisecond, "must be at least 500ms (zero means the default, 5s)")),
			want: []string{"f.yaml:5:12: actors.audit.lease = 200ms: must be at least 500ms (zero means the default, 5s)"}},
		{name: "nested joins, every kind of place", actor: "audit",
			err: errors.Join(
				errors.Join(bad("Heartbeat", time.Second, "must not exceed half the Lease (200ms)")),
				bad("MaxAttempts", 4, "must not exceed 3 on this backend"),
				bad("Prefix", "a b", "must be letters"),
				errors.New("the backend cannot run it"),
			),
			want: []string{
				"f.yaml:2:3: actors.audit.heartbeat: not set, but must not exceed half the lease (200ms)",
				"f.yaml:2:3: actors.audit: Config.Prefix is \"a b\": must be letters",
				"f.yaml:2:3: actors.audit: the backend cannot run it",
				"f.yaml:4:19: $ACTORPOOL_ACTOR_AUDIT_MAX_ATTEMPTS: actors.audit.max_attempts = 4: must not exceed 3 on this backend",
			}},
		{name: "an actor with no settings", actor: "mail", err: bad("Workers", 0, "must be set"),
			want: []string{"f.yaml:6:3: actors.mail.workers: not set, but must be set"}},
		{name: "no such actor", actor: "nope", err: errors.New("x"), other: `f.yaml declares no actor named "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.ActorProblems(tt.actor, tt.err)
			var cerr *Error
			switch {
			case tt.other != "":
				if err == nil || errors.As(err, &cerr) || !strings.Contains(err.Error(), tt.other) {
					t.Errorf("ActorProblems: %v, want an error containing %q", err, tt.other)
				}
				return
			case tt.want == nil:
				if err != nil {
					t.Errorf("ActorProblems: %v, want nil", err)
				}
				return
			case !errors.As(err, &cerr):
				t.Fatalf("ActorProblems: %T %v, want a *config.Error", err, err)
			}
			var got []string
			for _, p := range cerr.Problems {
				got = append(got, p.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestHugeHeartbeat checks the heartbeat's rule against a heartbeat so long
// that twice it overflows a time.Duration: it still exceeds half the lease.
func TestHugeHeartbeat(t *testing.T) {
	for _, doc := range []string{
		"actors:\n  a:\n    heartbeat: 2000000h\n",
		"actors:\n  a:\n    lease: 10s\n    heartbeat: 2562047h\n",
	} {
		_, err := Parse("f.yaml", []byte(doc), nil)
		var cerr *Error
		if !errors.As(err, &cerr) || len(cerr.Problems) != 1 ||
			cerr.Problems[0].Field != "actors.a.heartbeat" || !strings.Contains(cerr.Problems[0].Rule, "must not exceed half the lease") {
			t.Errorf("Parse(%q) = %v, want the heartbeat's rule broken", doc, err)
		}
	}
}

// TestLeasesByTheBackendsRules holds Load to its doc: lease and heartbeat
// are checked "by the rules both backends share". A lease or heartbeat
// that pgactor and jsactor both refuse must be a problem in the file, and
// one that either takes must not be. Before the fix a lease under the
// shortest that either backend takes (pgactor's 100ms) passed Load and
// `actorpool config check`, to be refused by whichever backend ran it.
func TestLeasesByTheBackendsRules(t *testing.T) {
	durations := []time.Duration{0, time.Nanosecond, 10 * time.Millisecond, 40 * time.Millisecond, 50 * time.Millisecond,
		99 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond,
		499 * time.Millisecond, 500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second}
	for _, lease := range durations {
		for _, heartbeat := range durations {
			pgErr := pgactor.Config[int]{Lease: lease, Heartbeat: heartbeat}.Validate()
			jsErr := jsactor.Config[int]{Lease: lease, Heartbeat: heartbeat}.Validate()
			doc := fmt.Sprintf("actors:\n  a:\n    lease: %v\n    heartbeat: %v\n", lease, heartbeat)
			_, err := Parse("f.yaml", []byte(doc), nil)
			if want := pgErr == nil || jsErr == nil; (err == nil) != want {
				t.Errorf("lease %v, heartbeat %v: Parse: %v\npgactor: %v\njsactor: %v", lease, heartbeat, err, pgErr, jsErr)
			}
		}
	}
}
