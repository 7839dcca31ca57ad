package actor

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// fuzzPayload is a payload of the shapes that JSON payloads take.
type fuzzPayload struct {
	N    int
	S    string
	L    []int
	Next *fuzzPayload `json:",omitempty"`
}

func (p fuzzPayload) equal(q fuzzPayload) bool {
	if p.N != q.N || p.S != q.S || !slices.Equal(p.L, q.L) || (p.Next == nil) != (q.Next == nil) {
		return false
	}
	return p.Next == nil || p.Next.equal(*q.Next)
}

// FuzzDeadLetterJSON decodes a letter as a FileSink reads one: bytes that
// decode encode again, and what they encode to decodes and encodes to the
// same bytes; bytes that do not decode fail with an error that says why.
func FuzzDeadLetterJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var l DeadLetter[fuzzPayload]
		if err := json.Unmarshal(data, &l); err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if l.Reason == 0 {
			t.Fatalf("%q decodes to a letter without a reason", data)
		}
		once, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("%q decodes to %+v, which does not encode: %v", data, l, err)
		}
		var back DeadLetter[fuzzPayload]
		if err := json.Unmarshal(once, &back); err != nil {
			t.Fatalf("%s, encoded, does not decode: %v", once, err)
		}
		twice, err := json.Marshal(back)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("encoded once %s\nencoded twice %s (%v)", once, twice, err)
		}
	})
}
