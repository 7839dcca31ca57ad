#!/usr/bin/env bash
# sync.sh copies pgxpool's own tests from the pgx module in the Go module
# cache into pgxpool/, changing only their import of pgxpool to pgpool
# (and gofmt the import block it reorders), and
# removing the tests listed in pgxpool/removed.txt, which cannot compile
# outside the pgx module. The tests pgpool does not pass on purpose are
# skipped by name instead (pgxpool/skipped.txt), so that their code stays
# as pgx wrote it. Run it after changing the pgx version in go.mod.
set -euo pipefail
cd "$(dirname "$0")"
version=$(cd .. && go list -m -f "{{.Version}}" github.com/jackc/pgx/v5) # the version pgpool is built on
src=$(go env GOMODCACHE)/github.com/jackc/pgx/v5@$version/pgxpool
go get github.com/jackc/pgx/v5@"$version"

rm -f pgxpool/*_test.go
for f in "$src"/*_test.go; do
	out=pgxpool/$(basename "$f")
	sed 's#"github.com/jackc/pgx/v5/pgxpool"#pgxpool "github.com/actorpool/actorpool/pgpool"#' "$f" >"$out"
	chmod 644 "$out"
done
# Remove each listed test: its comment lines, its func, up to the closing
# brace at the start of a line.
grep -v '^#' pgxpool/removed.txt | while read -r name _; do
	[ -n "$name" ] || continue
	for f in pgxpool/*_test.go; do
		awk -v name="$name" '
			/^\/\// { comments = comments $0 "\n"; next }
			$0 ~ "^func " name "\\(" { skipping = 1; comments = ""; next }
			skipping && /^}/ { skipping = 0; next }
			skipping { next }
			{ printf "%s", comments; comments = ""; print }
			END { printf "%s", comments }
		' "$f" >"$f.tmp" && mv "$f.tmp" "$f"
	done
done
# The imports only the removed tests used.
sed -i -e '\#"github.com/jackc/pgx/v5/internal/pgmock"#d' -e '\#"github.com/jackc/pgx/v5/pgproto3"#d' pgxpool/pool_test.go
if ! grep -q 'net\.' pgxpool/pool_test.go; then sed -i '/^\t"net"$/d' pgxpool/pool_test.go; fi
gofmt -w pgxpool # the new import path sorts first
go mod tidy
go vet ./pgxpool
echo "pgxpool tests of pgx $version copied into pgxpool/"
