package jsactor

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzHeaderText checks that any type name, unique key or error message
// survives a task's headers: the value written has no line break and no
// space at either end (which the wire would cut), and reads back as it
// was; and that a record read from any headers is written and read back
// unchanged.
func FuzzHeaderText(f *testing.F) {
	for _, s := range []string{"", "plain", " lead", "trail ", "line\nbreak", "\r\n", "~qtricky", `~q"x"`, "tab\there", "\xff\xfe", "ünïcödé", "a.b *>"} {
		f.Add(s, "7", "-3")
	}
	f.Fuzz(func(t *testing.T, s, charged, gen string) {
		v := headerText(s)
		if strings.ContainsAny(v, "\r\n") || strings.TrimSpace(v) != v || !utf8.ValidString(v) {
			t.Fatalf("headerText(%q) = %q: the wire would not carry it unchanged", s, v)
		}
		if back := readText(v); back != s {
			t.Fatalf("readText(headerText(%q)) = %q", s, back)
		}
		// Whatever the headers hold, a record read from them is written
		// and read back unchanged.
		h := map[string][]string{hdrType: {v}, hdrKey: {s}, hdrError: {s}, hdrCharged: {charged}, hdrGen: {gen}, hdrID: {charged}}
		r := readRecord(h, 42, time.Unix(0, 1))
		if r.charged < 0 || r.gen < 0 || r.id == 0 {
			t.Fatalf("record %+v from %q has a negative count or no ID", r, h)
		}
		again := readRecord(r.header(), 42, time.Unix(0, 1))
		if again != r {
			t.Fatalf("record %+v written and read back is %+v", r, again)
		}
	})
}
