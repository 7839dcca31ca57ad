package adapter

import (
	"strings"
	"testing"
)

func TestCheckHostPort(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"127.0.0.1:6379", ""},
		{"[::1]:1", ""},
		{"db:postgresql", ""},
		{":65535", ""},
		{"cache", `must be "host:port": missing port in address`},
		{"a:b:c", "too many colons"},
		{"h:0", "between 1 and 65535"},
		{"h:65536", "between 1 and 65535"},
		{"h:99999999999999999999999", "between 1 and 65535"},
		{"h:", "a number from 1 to 65535, or a service's name"},
		{"h:ht tp", "a number from 1 to 65535, or a service's name"},
	}
	for _, tt := range tests {
		got := CheckHostPort(tt.addr, `"host:port"`)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) || (got != "" && strings.Contains(got, tt.addr)) {
			t.Errorf("CheckHostPort(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
	if CheckPath("/run/x.sock") != "" || !strings.Contains(CheckPath("/run/\x00"), "NUL") {
		t.Error("CheckPath")
	}
}
