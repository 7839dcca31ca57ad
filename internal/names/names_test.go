package names

import (
	"strings"
	"testing"
)

type color uint8

const (
	red color = iota + 1
	green
)

var colors = New[color]("paint", "color", "color", "red", "green")

func TestTable(t *testing.T) {
	tests := []struct {
		code    color
		name    string
		marshal string // "" when Marshal must fail
	}{
		{0, "color(0)", ""},
		{red, "red", "red"},
		{green, "green", "green"},
		{3, "color(3)", ""},
	}
	for _, tt := range tests {
		if got := colors.String(tt.code); got != tt.name {
			t.Errorf("String(%d) = %q, want %q", tt.code, got, tt.name)
		}
		text, err := colors.Marshal(tt.code)
		if tt.marshal == "" {
			if err == nil || !strings.Contains(err.Error(), "paint: cannot encode unknown "+tt.name) {
				t.Errorf("Marshal(%d) = %q, %v; want an error naming %s", tt.code, text, err, tt.name)
			}
			continue
		}
		if err != nil || string(text) != tt.marshal {
			t.Errorf("Marshal(%d) = %q, %v; want %q", tt.code, text, err, tt.marshal)
		}
		back, err := colors.Unmarshal(text)
		if err != nil || back != tt.code {
			t.Errorf("Unmarshal(%q) = %d, %v; want %d", text, back, err, tt.code)
		}
	}
}

func TestUnmarshalUnknown(t *testing.T) {
	for _, text := range []string{"", "blue", "Red"} {
		_, err := colors.Unmarshal([]byte(text))
		if err == nil || err.Error() != `paint: unknown color "`+text+`"; want one of "red", "green"` {
			t.Errorf("Unmarshal(%q) error = %v", text, err)
		}
	}
}
