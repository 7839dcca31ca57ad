package pools

import (
	"context"
	"fmt"

	"github.com/actorpool/actorpool/bench/internal/pick"
)

// A Pool lends objects. It is the one interface every pool under comparison
// is adapted to, so that the workloads drive each pool the same way.
//
// Take and give back are one call, Do, rather than two: the handle that
// each pool's own take returns (a lease, a *puddle.Resource, a *sql.Conn,
// a *smartconnpool.Pooled) then stays in Do's frame, and no adapter has to
// box it in an interface or keep it in a map to find it again, which would
// add allocations or shared writes that the pool itself does not have.
type Pool interface {
	// Do takes an object, waiting as the pool waits when none is free,
	// calls fn with it and gives it back. It returns the error that kept
	// it from taking an object, or from giving it back.
	Do(ctx context.Context, fn func(*Object)) error
	// Close destroys the pool's objects. Every Do must have returned.
	Close() error
}

// Config is what every pool is built from.
type Config struct {
	// Size is the most objects the pool may have alive at once.
	Size int
	// Factory makes and destroys the objects.
	Factory *Factory
}

func (c Config) validate() error {
	if c.Size < 1 {
		return fmt.Errorf("pools: Config.Size is %d; it must be at least 1", c.Size)
	}
	if c.Factory == nil {
		return fmt.Errorf("pools: Config.Factory is nil; it must be set")
	}
	return nil
}

// Kind says where a pool comes from.
type Kind uint8

const (
	// Ours is actorpool.
	Ours Kind = iota
	// ThirdParty is a published pool: puddle, database/sql, smartconnpool,
	// go-commons-pool. The goals of the comparison are set against these.
	ThirdParty
	// Design is a well-known design written here from its description.
	Design
	// Floor is sync.Pool: not a bounded pool, the cost of a get and a put.
	Floor
)

func (k Kind) String() string {
	switch k {
	case Ours:
		return "ours"
	case ThirdParty:
		return "third party"
	case Design:
		return "design"
	case Floor:
		return "floor"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// A Contender is a pool under comparison.
type Contender struct {
	// Name names the pool in benchmark names and tables: lower case, no
	// spaces or slashes.
	Name string
	Kind Kind
	// Unbounded is true for a pool that caps nothing (sync.Pool): Check
	// then does not hold it to its size.
	Unbounded bool
	// New builds the pool.
	New func(cfg Config) (Pool, error)
}

// Baseline is the name of the pool the others are compared with.
const Baseline = "actorpool"

// All returns every pool under comparison, actorpool first, then the
// third-party pools, the designs written here and the floor.
func All() []Contender {
	return []Contender{
		{Name: "actorpool", Kind: Ours, New: NewActorpool},
		{Name: "actorpool-bounded", Kind: Ours, New: NewActorpoolBounded},
		{Name: "puddle", Kind: ThirdParty, New: NewPuddle},
		{Name: "sql", Kind: ThirdParty, New: NewSQL},
		{Name: "smartconnpool", Kind: ThirdParty, New: NewSmartconnpool},
		{Name: "commonspool", Kind: ThirdParty, New: NewCommonsPool},
		{Name: "chan", Kind: Design, New: NewChan},
		{Name: "stack", Kind: Design, New: NewStack},
		{Name: "mailbox", Kind: Design, New: NewMailbox},
		{Name: "mailbox-partitioned", Kind: Design, New: NewPartitionedMailbox},
		{Name: "syncpool", Kind: Floor, Unbounded: true, New: NewSyncPool},
	}
}

// Select returns the contenders named in a comma-separated list, in the
// order of All, or all of them for an empty list.
func Select(list string) ([]Contender, error) {
	cs, err := pick.Named(All(), func(c Contender) string { return c.Name }, list, "pool")
	if err != nil {
		return nil, fmt.Errorf("pools: %w", err)
	}
	return cs, nil
}
