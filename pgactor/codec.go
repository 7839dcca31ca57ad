package pgactor

import "encoding/json"

// A Codec turns payloads into the bytes stored in a task's row and back.
// It must be safe for concurrent use. A payload that Decode refuses — its
// type changed between the deploy that sent it and the one that runs it —
// is dead-lettered with ReasonUndecodable, not retried.
type Codec[T any] interface {
	Encode(payload T) ([]byte, error)
	Decode(data []byte) (T, error)
}

// JSON is the default codec: encoding/json. Fields added to a payload type
// decode from older rows as their zero values, and fields removed are
// ignored; a field whose type changed fails to decode.
type JSON[T any] struct{}

// Encode returns the payload as JSON.
func (JSON[T]) Encode(payload T) ([]byte, error) { return json.Marshal(payload) }

// Decode reads a payload from JSON.
func (JSON[T]) Decode(data []byte) (T, error) {
	var v T
	err := json.Unmarshal(data, &v)
	return v, err
}
