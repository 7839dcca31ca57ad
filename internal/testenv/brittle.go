package testenv

import "encoding/json"

// Brittle is a task payload whose JSON decoding panics on the value
// "boom", as a hand-written UnmarshalJSON may on a value it does not
// expect: a durable actor's test stores one to see the panic taken as the
// task's decode error.
type Brittle struct{ V string }

// UnmarshalJSON decodes a JSON string into b, and panics on "boom".
func (b *Brittle) UnmarshalJSON(data []byte) error {
	if string(data) == `"boom"` {
		panic("brittle: unexpected value")
	}
	return json.Unmarshal(data, &b.V)
}

// MarshalJSON encodes b as its JSON string.
func (b Brittle) MarshalJSON() ([]byte, error) { return json.Marshal(b.V) }
