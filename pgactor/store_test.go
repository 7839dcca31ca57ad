package pgactor

import (
	"strconv"
	"strings"
	"testing"
)

// TestPrepare checks that prepare numbers a statement's parameters in the
// order its list names them, however often and wherever the text uses
// them, and refuses a parameter the list lacks or the text does not use.
func TestPrepare(t *testing.T) {
	n := len(statements)
	defer func() { statements = statements[:n] }()
	for _, tt := range []struct {
		text    string
		params  []string
		want    string
		refused string
	}{
		{text: `SELECT @b, @a, @b::int, @a_us`, params: []string{"a", "b", "a_us"}, want: `SELECT $2, $1, $2::int, $3`},
		{text: `SELECT {s}.f(@a) WHERE x = @c`, params: []string{"a"}, refused: "@c is not in its list a"},
		{text: `SELECT @a`, params: []string{"a", "b"}, refused: "parameter b is not used"},
		{text: `SELECT 1`, want: `SELECT 1`},
	} {
		func() {
			defer func() {
				v := recover()
				if msg, _ := v.(string); (tt.refused == "") != (v == nil) || !strings.Contains(msg, tt.refused) {
					t.Errorf("prepare(%q, %q) panicked with %v, want %q", tt.text, tt.params, v, tt.refused)
				}
			}()
			if got := prepare(tt.text, tt.params...).text; got != tt.want {
				t.Errorf("prepare(%q, %q) = %q, want %q", tt.text, tt.params, got, tt.want)
			}
		}()
	}
}

// TestStatements checks that every statement of the store fills in the
// schema, and uses each of its parameters, $1 to $n.
func TestStatements(t *testing.T) {
	if len(statements) < 25 {
		t.Fatalf("%d statements prepared; the store has more", len(statements))
	}
	for _, st := range statements {
		sql := st.in("some_schema")
		if strings.Contains(sql, "{s}") || strings.Contains(sql, "@") {
			t.Errorf("statement not filled in: %s", sql)
		}
		for i := range st.params {
			if !strings.Contains(sql, "$"+strconv.Itoa(i+1)) {
				t.Errorf("statement does not use $%d (%s): %s", i+1, st.params[i], sql)
			}
		}
	}
}
