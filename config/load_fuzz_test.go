package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse parses a file of any content under an environment of any
// overrides (env holds "KEY=value" lines). It gets a File whose every pool
// and actor passes Validate, or an *Error whose every problem says what is
// wrong and where.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, env string) {
		var environ []string
		if env != "" {
			environ = strings.Split(env, "\n")
		}
		file, err := Parse("fuzz.yaml", data, environ)
		if err != nil {
			var cerr *Error
			if !errors.As(err, &cerr) || file != nil {
				t.Fatalf("Parse = %v, %v; want nil and an *Error", file, err)
			}
			if len(cerr.Problems) == 0 {
				t.Fatal("an *Error without problems")
			}
			for _, p := range cerr.Problems {
				if p.Rule == "" || p.File != "fuzz.yaml" || p.Line < 0 || p.Column < 0 || (p.Line == 0 && p.Column > 0) {
					t.Errorf("problem %+v: %q", p, p.Error())
				}
			}
			return
		}
		if len(file.Pools)+len(file.Actors) == 0 {
			t.Fatal("a file that declares nothing parsed")
		}
		names := map[string]bool{}
		for _, p := range file.Pools {
			if checkName(p.Name) != "" || p.Config.Name != p.Name || names["pool "+p.Name] {
				t.Errorf("pool %q", p.Name)
			}
			names["pool "+p.Name] = true
			if err := p.Config.Validate(); err != nil {
				t.Errorf("pool %q parsed, but its Config does not pass Validate: %v", p.Name, err)
			}
		}
		for _, a := range file.Actors {
			if checkName(a.Name) != "" || names["actor "+a.Name] {
				t.Errorf("actor %q", a.Name)
			}
			names["actor "+a.Name] = true
			if err := ActorConfig[int](a).Validate(); err != nil {
				t.Errorf("actor %q parsed, but its Config does not pass Validate: %v", a.Name, err)
			}
		}
	})
}
