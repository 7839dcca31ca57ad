package jsactor

import "encoding/json"

// A Codec turns payloads into the bytes of a task's message and back. It
// must be safe for concurrent use. It has the method set of
// pgactor.Codec, so a codec written for one serves both. A payload that
// Decode refuses is dead-lettered with ReasonUndecodable, not retried,
// and never blocks the tasks behind it.
type Codec[T any] interface {
	Encode(payload T) ([]byte, error)
	Decode(data []byte) (T, error)
}

// JSON is the default codec: encoding/json.
type JSON[T any] struct{}

// Encode returns the payload as JSON.
func (JSON[T]) Encode(payload T) ([]byte, error) { return json.Marshal(payload) }

// Decode reads a payload from JSON.
func (JSON[T]) Decode(data []byte) (T, error) {
	var v T
	err := json.Unmarshal(data, &v)
	return v, err
}
