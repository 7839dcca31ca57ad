package actorpool

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
)

// A slotMove is one change of a slot's state that the code makes: from a
// kind to a kind, handing the object out or not, made by one function.
type slotMove struct {
	from, to slotKind
	lent     bool   // the seq moves on: the object is handed out
	fn       string // the function that makes the move
	who      string // who runs fn, and when
}

// slotMoves is the slot state machine: every move the code makes, and who
// makes it. A parked object stays in use (see park.go), so parking is not
// a move of its own. Builds with the race detector check every CAS on a
// slot's state against this table and panic on a move it does not list
// (checkedCAS); TestSlotMoves drives each move through fn.
var slotMoves = []slotMove{
	// The keeper: new and tested objects.
	{from: kindFree, to: kindReserved, fn: "install",
		who: "the keeper, installing a new object"},
	{from: kindReserved, to: kindIdle, fn: "putInService",
		who: "the keeper, making a new or tested object idle: no waiter"},
	{from: kindReserved, to: kindInUse, lent: true, fn: "serveLocked",
		who: "the keeper, handing a new or tested object to a waiter (putInService)"},

	// Takers.
	{from: kindIdle, to: kindInUse, lent: true, fn: "settle",
		who: "a taker, claiming an index it popped from the idle list"},
	{from: kindInUse, to: kindInUse, lent: true, fn: "acquireParked",
		who: "a taker, claiming an object parked in a shard's word"},
	{from: kindFree, to: kindFree, fn: "settle",
		who: "a taker, clearing the listed bit of a stale idle-list entry"},
	{from: kindInUse, to: kindInUse, fn: "settle",
		who: "a taker, clearing the listed bit of a stale idle-list entry"},
	{from: kindReserved, to: kindReserved, fn: "settle",
		who: "a taker, clearing the listed bit of a stale idle-list entry"},

	// Holders giving back, and takers serving waiters.
	{from: kindInUse, to: kindInUse, lent: true, fn: "serveLocked",
		who: "a holder, handing its object to a waiter (release)"},
	{from: kindInUse, to: kindIdle, fn: "release",
		who: "a holder, listing its object idle (FIFO)"},
	{from: kindInUse, to: kindIdle, fn: "parkFrom",
		who: "a holder parking its object, listing the one parked before it"},
	{from: kindInUse, to: kindIdle, fn: "relist",
		who: "a taker that claimed an object for waiters who all gave up (FIFO)"},
	{from: kindInUse, to: kindReserved, fn: "retire",
		who: "a holder retiring its object (release, Lease.Destroy), or a taker one it found unusable (retireUnusable)"},
	{from: kindInUse, to: kindReserved, fn: "hijackLease",
		who: "a holder taking its object out of the pool (Lease.Hijack)"},

	// The keeper: eviction, tests, Close, Reload, leaks.
	{from: kindIdle, to: kindReserved, fn: "reserveIdle",
		who: "the keeper, reserving an idle object to evict, test or retire it (a doomed one made idle: retireIdleSlot); once the keeper is gone, a holder, or a taker relisting, the doomed object it made idle"},
	{from: kindInUse, to: kindReserved, fn: "unpark",
		who: "the keeper, reserving the parked object (reserveIdle); once the keeper is gone, a holder, or a taker relisting, the doomed object it parked (retireIdleSlot)"},
	{from: kindInUse, to: kindReserved, fn: "reclaim",
		who: "the keeper, taking back the object of a leaked lease"},
	{from: kindReserved, to: kindFree, fn: "destroyed",
		who: "the keeper, once Destroy has returned or Lease.Hijack took the object"},
}

func (m slotMove) String() string {
	to := m.to.String()
	if m.lent {
		to += " (handed out)"
	}
	return fmt.Sprintf("%s: %v -> %s", m.fn, m.from, to)
}

// An unlistedMove is the panic of a slot move that slotMoves does not
// list, or that breaks a rule of every move (why).
type unlistedMove struct {
	move slotMove
	why  string
}

func (e *unlistedMove) Error() string {
	if e.why != "" {
		return "actorpool: slot move " + e.move.String() + " " + e.why
	}
	return "actorpool: slot move " + e.move.String() + " is not in slotMoves"
}

// checkedCAS is cas, checking the move against slotMoves when it succeeds.
func (s *slot) checkedCAS(old, new state) bool {
	if !s.state.CompareAndSwap(uint64(old), uint64(new)) {
		return false
	}
	m := slotMove{from: old.kind(), to: new.kind(), lent: new.seq() != old.seq(), fn: mover()}
	if new.shard() != old.shard() && !m.lent {
		// The word a lease's object is parked in is the one its state
		// names while the seq is the lease's (park.go).
		panic(&unlistedMove{move: m, why: "moves the slot's shard without handing the object out"})
	}
	if u := unlisting.Load(); u != nil && m.is(*u) {
		panic(&unlistedMove{move: m})
	}
	for _, l := range slotMoves {
		if m.is(l) {
			return true
		}
	}
	panic(&unlistedMove{move: m})
}

// unlisting is a move that checkedCAS treats as missing from slotMoves, set
// by TestSlotMoves to show that the check catches a move the table lacks.
var unlisting atomic.Pointer[slotMove]

// is reports whether m and o are the same move, whoever o says makes it.
func (m slotMove) is(o slotMove) bool {
	return m.from == o.from && m.to == o.to && m.lent == o.lent && m.fn == o.fn
}

// moveHelpers are the functions that change a slot's state for their
// callers; the caller is the one that makes the move.
var moveHelpers = map[string]bool{"checkedCAS": true, "cas": true, "move": true, "handOut": true, "list": true, "claimParked": true}

// mover names the function making the slot move under way.
func mover() string {
	pcs := make([]uintptr, 16)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		name := f.Function[strings.LastIndexByte(f.Function, '.')+1:]
		if !moveHelpers[name] || !more {
			return name
		}
	}
}
