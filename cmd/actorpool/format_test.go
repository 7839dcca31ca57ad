package main

import (
	"strings"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{fmtInt(0), "0"},
		{fmtInt(999), "999"},
		{fmtInt(1000), "1,000"},
		{fmtInt(1234567), "1,234,567"},
		{fmtDur(0), "0"},
		{fmtDur(850), "850ns"},
		{fmtDur(12345), "12.3µs"},
		{fmtDur(4560 * time.Microsecond), "4.56ms"},
		{fmtDur(123 * time.Millisecond), "123ms"},
		{fmtDur(1200 * time.Millisecond), "1.20s"},
		{fmtSeconds(2500 * time.Millisecond), "2.5s"},
		{fmtSeconds(90 * time.Second), "1m30s"},
		{fmtBound(0), "0"},
		{fmtBound(50 * time.Microsecond), "50µs"},
		{fmtBound(20 * time.Millisecond), "20ms"},
		{fmtBound(2 * time.Second), "2s"},
		{bar(0, 4), "▕    ▏"},
		{bar(0.5, 4), "▕██  ▏"},
		{bar(0.56, 4), "▕██▏ ▏"},
		{bar(1, 4), "▕████▏"},
		{bar(2, 4), "▕████▏"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestPrintHistogram proves that the rows cover every count, from the
// first row with counts to the last.
func TestPrintHistogram(t *testing.T) {
	var h histogram
	for range 10 {
		h.record(30 * time.Microsecond)
	}
	for range 30 {
		h.record(3 * time.Millisecond)
	}
	var b strings.Builder
	printHistogram(&b, h.snapshot())
	want := []string{"20µs – 50µs", "50µs – 100µs", "2ms – 5ms"}
	for _, w := range want {
		if !strings.Contains(b.String(), w) {
			t.Errorf("no row %q in\n%s", w, b.String())
		}
	}
	if !strings.Contains(b.String(), "10  25.0%") || !strings.Contains(b.String(), "30  75.0%") {
		t.Errorf("counts and shares wrong in\n%s", b.String())
	}
	if strings.Contains(b.String(), "10µs – 20µs") || strings.Contains(b.String(), "5ms – 10ms") {
		t.Errorf("rows outside the counts in\n%s", b.String())
	}
}
