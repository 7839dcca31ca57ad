//go:build race

package pgactor

const raceEnabled = true
