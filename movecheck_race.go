//go:build race

package actorpool

// checkMoves is whether every slot move is checked against slotMoves: under
// the race detector, as the tests run, so that every test checks the slot
// state machine.
const checkMoves = true
