package spin

import (
	"testing"
	"time"
)

func TestIterationsScale(t *testing.T) {
	one, ten := Iterations(time.Microsecond), Iterations(10*time.Microsecond)
	if one < 1 {
		t.Fatalf("Iterations(1µs) = %d, want at least 1", one)
	}
	// The ratio is exact but for rounding: the calibration is shared.
	if ten < 9*one || ten > 11*one {
		t.Errorf("Iterations(10µs) = %d, Iterations(1µs) = %d; want ten times as many", ten, one)
	}
}
