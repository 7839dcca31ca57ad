#!/bin/sh
# build-variants.sh OUT NAME=COMMIT...
#
# Builds one test binary, OUT, that measures several versions of the
# actorpool package side by side with smartconnpool and the buffered
# channel: each NAME=COMMIT is the root package as of COMMIT, copied into
# bench/internal/variants/NAME (package NAME, not committed) behind the
# bench module's Pool interface. BenchmarkVariants runs the contended
# cells of workload.Cells with every pool back to back in each cell, and
# reports, for the actorpool versions, waits/op: the share of takes that
# queued (Stats.Waits over b.N). Two diagnostics run beside each version
# and the channel: NAME-warm, the version with all its objects made and
# idle before the cell starts, and NAME-create100us and chan-create100us,
# whose creates take 100 µs, as a connect would, instead of none: whether
# a line of waiters that forms while the pool fills is what a cell
# measures. BenchmarkVariantsUncontended runs the uncontended take of
# each version through the interface and through Acquire/Release.
#
# Run it from the bench module's directory; the commits must be in the
# repository (issue 23's are on the branches i23-v/* and i23-pool). The
# copies are removed once the binary is built. Used for issue 23, where
# the 16-core machine that runs the binary has no Go toolchain.
set -eu
out=$1
shift
dir=internal/variants
rm -rf "$dir"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
root=$(git rev-parse --show-toplevel)
names=""
for v in "$@"; do
	name=${v%%=*}
	commit=${v#*=}
	mkdir -p "$dir/$name"
	for f in $(git -C "$root" ls-tree --name-only "$commit" | grep '\.go$' | grep -v '_test\.go$'); do
		git -C "$root" show "$commit:$f" | sed "s/^package actorpool\$/package $name/" >"$dir/$name/$f"
	done
	cat >"$dir/$name/zz_bench_adapter.go" <<GO
package $name

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/actorpool/actorpool/bench/pools"
)

// Commit is the commit this copy of the package was taken from.
const Commit = "$commit"

// LastWaits is Stats.Waits of the pool closed last.
var LastWaits atomic.Int64

type benchPool struct{ p *Pool[*pools.Object] }

// NewBench returns the package's pool at its defaults behind pools.Pool.
func NewBench(cfg pools.Config) (pools.Pool, error) {
	p, err := New(FactoryFuncs[*pools.Object]{CreateFunc: cfg.Factory.Create, DestroyFunc: cfg.Factory.Destroy},
		Config{Name: "bench", MaxObjects: cfg.Size, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	return &benchPool{p: p}, nil
}

// NewBenchWarm is NewBench with every object made and idle before it
// returns: each taken at once, then all given back. A diagnostic: it shows
// what the contended cells measure once no line of waiters forms while the
// pool fills.
func NewBenchWarm(cfg pools.Config) (pools.Pool, error) {
	bp, err := NewBench(cfg)
	if err != nil {
		return nil, err
	}
	p := bp.(*benchPool).p
	held := make([]Lease[*pools.Object], 0, cfg.Size)
	for range cfg.Size {
		l, err := p.Acquire(context.Background())
		if err != nil {
			return nil, err
		}
		held = append(held, l)
	}
	for _, l := range held {
		if err := l.Release(); err != nil {
			return nil, err
		}
	}
	return bp, nil
}

func (a *benchPool) Do(ctx context.Context, fn func(*pools.Object)) error {
	l, err := a.p.Acquire(ctx)
	if err != nil {
		return err
	}
	fn(l.Value())
	return l.Release()
}

func (a *benchPool) Close() error {
	err := a.p.Close(context.Background())
	LastWaits.Store(a.p.Stats().Waits)
	return err
}

// Direct takes and gives back with Acquire and Release, on one goroutine.
func Direct(b *testing.B) {
	f := &pools.Factory{}
	p, err := New(FactoryFuncs[*pools.Object]{CreateFunc: f.Create, DestroyFunc: f.Destroy}, Config{MaxObjects: 8})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(context.Background())
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		l, err := p.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(); err != nil {
			b.Fatal(err)
		}
	}
}
GO
	names="$names $name"
done
{
	cat <<'GO'
package variants_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/bench/pools"
	"github.com/actorpool/actorpool/bench/workload"
GO
	for n in $names; do echo "	\"github.com/actorpool/actorpool/bench/$dir/$n\""; done
	cat <<'GO'
)

type contender struct {
	pools.Contender
	waits  *atomic.Int64
	direct func(*testing.B)
}

func contenders() []contender {
	return []contender{
GO
	for n in $names; do
		echo "		{pools.Contender{Name: \"$n\", Kind: pools.Ours, New: $n.NewBench}, &$n.LastWaits, $n.Direct},"
		echo "		{pools.Contender{Name: \"$n-warm\", Kind: pools.Ours, New: $n.NewBenchWarm}, &$n.LastWaits, nil},"
		echo "		{pools.Contender{Name: \"$n-create100us\", Kind: pools.Ours, New: slowCreate($n.NewBench)}, &$n.LastWaits, nil},"
	done
	cat <<'GO'
		{Contender: pools.Contender{Name: "smartconnpool", Kind: pools.ThirdParty, New: pools.NewSmartconnpool}},
		{Contender: pools.Contender{Name: "chan", Kind: pools.Design, New: pools.NewChan}},
		{Contender: pools.Contender{Name: "chan-create100us", Kind: pools.Design, New: slowCreate(pools.NewChan)}},
	}
}

// slowCreate is newPool with creates that take 100 µs, as a connect
// would: a diagnostic of the line of waiters that forms while a pool
// fills, which the benchmark's instant creates spare a pool that creates
// on the taker's goroutine.
func slowCreate(newPool func(pools.Config) (pools.Pool, error)) func(pools.Config) (pools.Pool, error) {
	return func(cfg pools.Config) (pools.Pool, error) {
		cfg.Factory.CreateDelay = 100 * time.Microsecond
		return newPool(cfg)
	}
}

var checks sync.Map

func checked(b *testing.B, c pools.Contender) {
	once, _ := checks.LoadOrStore(c.Name, sync.OnceValue(func() error { return pools.Check(context.Background(), c) }))
	if err := once.(func() error)(); err != nil {
		b.Fatalf("correctness check failed, not measuring: %v", err)
	}
}

func BenchmarkVariants(b *testing.B) {
	for _, cell := range workload.Cells() {
		b.Run(cell.Name(), func(b *testing.B) {
			for _, c := range contenders() {
				b.Run("pool="+c.Name, func(b *testing.B) {
					checked(b, c.Contender)
					workload.Contended(b, c.Contender, cell)
					if c.waits != nil {
						b.ReportMetric(float64(c.waits.Load())/float64(b.N), "waits/op")
					}
				})
			}
		})
	}
}

func BenchmarkVariantsUncontended(b *testing.B) {
	for _, c := range contenders() {
		if c.direct == nil {
			continue
		}
		b.Run("pool="+c.Name, func(b *testing.B) { workload.Uncontended(b, c.Contender) })
		b.Run("direct/pool="+c.Name, c.direct)
	}
}
GO
} >"$dir/variants_test.go"
gofmt -w "$dir"
go vet "./$dir/..."
go test -c -ldflags='-s -w' -o "$out" "./$dir"
echo "built $out from$(for v in "$@"; do printf ' %s' "$v"; done)"
