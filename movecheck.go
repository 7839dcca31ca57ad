//go:build !race

package actorpool

// checkMoves is whether every slot move is checked against slotMoves: only
// under the race detector, so that normal builds pay nothing.
const checkMoves = false
