package pgactor

import (
	"bytes"
	"testing"
	"time"
)

// codecPayload has the shapes of payloads that rows hold.
type codecPayload struct {
	UserID int64
	Device string
	Tags   []string
	At     time.Time
	Meta   map[string]int `json:",omitempty"`
}

// FuzzJSONCodec decodes a row's payload of any bytes with the default
// codec: what decodes encodes, and encodes again to the same bytes once
// decoded; what does not fails with an error that says why, which the
// actor turns into a dead letter (ReasonUndecodable).
func FuzzJSONCodec(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var c JSON[codecPayload]
		v, err := c.Decode(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		once, err := c.Encode(v)
		if err != nil {
			t.Fatalf("%q decodes to %+v, which does not encode: %v", data, v, err)
		}
		back, err := c.Decode(once)
		if err != nil {
			t.Fatalf("%s, encoded, does not decode: %v", once, err)
		}
		if twice, err := c.Encode(back); err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("encoded once %s\nencoded twice %s (%v)", once, twice, err)
		}
	})
}
