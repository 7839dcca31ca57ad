package servers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/actorpool/actorpool/bench/internal/hist"
	"github.com/actorpool/actorpool/bench/internal/split"
)

// An Op is an operation a cell runs: a query on PostgreSQL, a command on
// Redis.
type Op struct {
	Server Server
	// Name names it in benchmark names: select1 or lookup on PostgreSQL,
	// get or set on Redis.
	Name string
}

// The operations.
var (
	// Select1 runs SELECT 1.
	Select1 = Op{Postgres, "select1"}
	// Lookup reads one row of the KeySpace rows by its primary key, drawn
	// at random.
	Lookup = Op{Postgres, "lookup"}
	// Get reads one of the KeySpace keys, drawn at random.
	Get = Op{Redis, "get"}
	// Set writes one of the KeySpace keys, drawn at random, with the value
	// it already holds, so that a Get still finds what it expects.
	Set = Op{Redis, "set"}
)

// Ops lists the operations in the order the benchmarks run them.
var Ops = []Op{Select1, Lookup, Get, Set}

// Clients are the numbers of goroutines that run operations at once.
var Clients = []int{1, 8, 64, 256}

// A Cell is one point of the comparison: an operation and how many
// clients run it at once, on a pool of Size connections.
type Cell struct {
	Op      Op
	Clients int
}

// Cells returns the cells of server s, operation first, then the number
// of clients.
func Cells(s Server) []Cell {
	var cells []Cell
	for _, op := range Ops {
		if op.Server != s {
			continue
		}
		for _, n := range Clients {
			cells = append(cells, Cell{Op: op, Clients: n})
		}
	}
	return cells
}

// Name returns the cell's benchmark name under its server's benchmark,
// such as "query=select1/clients=8" or "op=get/clients=8".
func (c Cell) Name() string {
	kind := "op"
	if c.Op.Server == Postgres {
		kind = "query"
	}
	return fmt.Sprintf("%s=%s/clients=%d", kind, c.Op.Name, c.Clients)
}

// FullName returns the name of the benchmark of pool on the cell, without
// its Benchmark prefix, as go test and the raw files name it:
// "Postgres/query=select1/clients=8/pool=pgpool".
func (c Cell) FullName(pool string) string {
	return c.Op.Server.BenchName() + "/" + c.Name() + "/pool=" + pool
}

// bind returns op as a function of a key index that runs it on p and
// checks what it read: a pool that answers with another key's value, or
// another client's reply, fails the benchmark rather than look fast.
func (op Op) bind(p Pool) (func(ctx context.Context, key int) error, error) {
	switch op {
	case Select1:
		pg, ok := p.(PostgresPool)
		if !ok {
			break
		}
		return func(ctx context.Context, _ int) error {
			n, err := pg.Select1(ctx)
			if err == nil && n != 1 {
				err = fmt.Errorf("%s returned %d", select1SQL, n)
			}
			return err
		}, nil
	case Lookup:
		pg, ok := p.(PostgresPool)
		if !ok {
			break
		}
		return func(ctx context.Context, key int) error {
			v, err := pg.Lookup(ctx, key)
			if err == nil && v != Values[key] {
				err = fmt.Errorf("lookup of row %d returned %q, want %q", key, v, Values[key])
			}
			return err
		}, nil
	case Get:
		rp, ok := p.(RedisPool)
		if !ok {
			break
		}
		return func(ctx context.Context, key int) error {
			v, err := rp.Get(ctx, Keys[key])
			if err == nil && v != Values[key] {
				err = fmt.Errorf("GET %s returned %q, want %q", Keys[key], v, Values[key])
			}
			return err
		}, nil
	case Set:
		rp, ok := p.(RedisPool)
		if !ok {
			break
		}
		return func(ctx context.Context, key int) error {
			return rp.Set(ctx, Keys[key], Values[key])
		}, nil
	}
	return nil, fmt.Errorf("servers: operation %s of %v cannot run on a %T", op.Name, op.Server, p)
}

// A client is one goroutine of Run.
type client struct {
	h   hist.Histogram
	rng *rand.Rand
	err error
}

func (c *client) run(ctx context.Context, op func(ctx context.Context, key int) error, n int) {
	for range n {
		key := c.rng.IntN(KeySpace)
		t0 := time.Now()
		err := op(ctx, key)
		c.h.Record(time.Since(t0))
		if err != nil {
			c.err = err
			return
		}
	}
}

// Run builds a pool of Size connections with c to the server at addr,
// warms it (every connection open and used once), and times b.N
// operations of cell.Op split evenly between cell.Clients goroutines
// started together, each drawing its keys at random. It reports the
// throughput (ops/s), allocations, and the 50th, 99th and 99.9th
// percentiles and the longest of the time an operation took, from asking
// the pool for a connection to having the answer (p50-ns, p99-ns,
// p99.9-ns, max-ns).
//
// Every operation is timed, unlike the pool workloads' one in eight: an
// operation is a round trip to a server, tens of microseconds, and the two
// clock reads around it, some tens of nanoseconds, change no figure.
func Run(b *testing.B, c Contender, cell Cell, addr string) {
	if c.Server != cell.Op.Server {
		b.Fatalf("%s is a %v pool; cell %s is for %v", c.Name, c.Server, cell.Name(), cell.Op.Server)
	}
	p, err := c.New(addr, Size, nil)
	if err != nil {
		b.Fatalf("%s: %v", c.Name, err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			b.Errorf("%s: Close: %v", c.Name, err)
		}
	}()
	ctx := context.Background()
	if err := warmed(ctx, p, Size); err != nil {
		b.Fatalf("%s: %v", c.Name, err)
	}
	op, err := cell.Op.bind(p)
	if err != nil {
		b.Fatal(err)
	}

	clients := make([]client, cell.Clients)
	for i := range clients {
		clients[i].rng = rand.New(rand.NewPCG(uint64(i), uint64(b.N)))
	}
	split.Run(b, len(clients), func(i, n int) { clients[i].run(ctx, op, n) })
	b.StopTimer()

	var all hist.Histogram
	for i := range clients {
		if err := clients[i].err; err != nil {
			b.Fatalf("%s: %s: %v", c.Name, cell.Name(), err)
		}
		all.Merge(&clients[i].h)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	all.Report(b)
}

// warmTimeout bounds warming a pool: connecting Size times to a server on
// this machine takes well under a second.
const warmTimeout = 30 * time.Second

// warmed warms p with n connections and checks that it then holds n.
func warmed(ctx context.Context, p Pool, n int) error {
	ctx, cancel := context.WithTimeout(ctx, warmTimeout)
	defer cancel()
	if err := p.Warm(ctx, n); err != nil {
		return err
	}
	if open := p.Open(); open != n {
		return fmt.Errorf("warmed with %d connections, the pool holds %d", n, open)
	}
	return nil
}
