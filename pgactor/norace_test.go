//go:build !race

package pgactor

const raceEnabled = false
