package config

import (
	"errors"
	"strings"
	"testing"
)

// TestMoreThanOneDocument: a file of two YAML documents, split by ---,
// must not have its second read as if it were not there — its pools, its
// actors and their mistakes with it. Before the fix Parse read the first
// and passed the file, with pool b missing and its negative max_objects
// unreported.
func TestMoreThanOneDocument(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"two documents", "pools:\n  a: {max_objects: 1}\n---\npools:\n  b: {max_objects: -2}\n",
			"f.yaml:4:1: the file holds a second YAML document (after ---), which would be ignored: declare every pool and actor in one document"},
		{"two documents, the first with a mistake", "pools:\n  a: {max_objects: 0}\n---\npools:\n  b: {max_objects: 1}\n",
			"f.yaml:2:20: pools.a.max_objects = 0: must be between 1 and 1048576\n" +
				"f.yaml:4:1: the file holds a second YAML document (after ---), which would be ignored: declare every pool and actor in one document"},
		{"a bad second document", "pools:\n  a: {max_objects: 1}\n---\npools: [\n",
			"f.yaml:4: not valid YAML: did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("f.yaml", []byte(tt.doc), nil)
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("Parse = %+v, %v; want the problem %s", f, err, tt.want)
			}
			var got []string
			for _, p := range cerr.Problems {
				got = append(got, p.Error())
			}
			if strings.Join(got, "\n") != tt.want {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}

	// A document start before the only document, and an end marker after
	// it, are one document.
	for _, doc := range []string{"---\npools:\n  a: {max_objects: 1}\n", "pools:\n  a: {max_objects: 1}\n...\n", "pools:\n  a: {max_objects: 1}\n---\n# nothing more\n"} {
		if _, err := Parse("f.yaml", []byte(doc), nil); err != nil {
			t.Errorf("Parse(%q): %v", doc, err)
		}
	}
}
