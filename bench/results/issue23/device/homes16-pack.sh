#!/usr/bin/env bash
# Packs what homes16.sh needs into .dev/ at the repository's root (ignored
# by git, carried with `carry: [".dev"]`): the bench module's test binary
# built at HEAD and at the commit before the homes change (a3b0722^),
# stripped and xz-packed (about 12 MB each).
#
#   bash bench/results/issue23/device/homes16-pack.sh    # from the repository's root
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo '/.dev/' >> .git/info/exclude; }
mkdir -p .dev
rm -f .dev/bench.test .dev/bench-before.test
(cd bench && go test -c -ldflags='-s -w' -o ../.dev/bench.test .)
tmp=$(mktemp -d)
git worktree add -q --detach "$tmp" a3b0722^
(cd "$tmp/bench" && go test -c -ldflags='-s -w' -o "$root/.dev/bench-before.test" .)
git worktree remove --force "$tmp"
xz -6 -T0 -f .dev/bench.test .dev/bench-before.test
ls -l .dev
