package config

import (
	"errors"
	"testing"
	"time"
)

// TestNestedMergeKeys: an anchor may itself merge another (<<: *base
// inside &defaults), as YAML's merge keys allow and yaml.v3 decodes, the
// entry's own keys winning over its anchor's, and the anchor's over those
// it merges. Before the fix the anchor's own "<<" reached the entry as a
// setting, "unknown setting \"<<\"", and what it merged was lost.
func TestNestedMergeKeys(t *testing.T) {
	const doc = `
x-base: &base
  max_objects: 2
  create_timeout: 1s
  test_timeout: 1s
x-defaults: &defaults
  <<: *base
  create_timeout: 2s
x-retry: &retry
  max_attempts: 3
  backoff: {initial: 1s}
x-audit: &audit
  <<: *retry
  workers: 2
pools:
  a:
    <<: *defaults
    test_timeout: 3s
  b:
    <<: [*defaults, {fifo: true}]
actors:
  q:
    <<: *audit
`
	f, err := Parse("f.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.Pool("a")
	if c := a.Config; c.MaxObjects != 2 || c.CreateTimeout != 2*time.Second || c.TestTimeout != 3*time.Second {
		t.Errorf("pool a = %+v, want max_objects 2 from base, create_timeout 2s from defaults, test_timeout 3s of its own", c)
	}
	b, _ := f.Pool("b")
	if c := b.Config; c.MaxObjects != 2 || c.CreateTimeout != 2*time.Second || c.TestTimeout != time.Second || !c.FIFO {
		t.Errorf("pool b = %+v, want max_objects 2, test_timeout 1s from base, create_timeout 2s from defaults, fifo", c)
	}
	q, _ := f.Actor("q")
	if q.MaxAttempts != 3 || q.Backoff.Initial != time.Second || q.Workers != 2 {
		t.Errorf("actor q = %+v, want max_attempts 3 and backoff.initial 1s from retry, workers 2 from audit", q)
	}

	// A mapping that merges itself is reported, not followed for ever.
	const cycle = "x-a: &a\n  max_objects: 1\n  <<: *a\npools:\n  p: {<<: *a}\n"
	_, err = Parse("f.yaml", []byte(cycle), nil)
	var cerr *Error
	if !errors.As(err, &cerr) || len(cerr.Problems) != 1 ||
		cerr.Problems[0].Error() != "f.yaml:3:3: pools.p: a merge key (<<) must not bring in the mapping it is in" {
		t.Errorf("Parse of a mapping that merges itself: %v", err)
	}
}
