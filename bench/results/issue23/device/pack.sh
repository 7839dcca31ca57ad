#!/usr/bin/env bash
# Packs what run16.sh needs on a bare 16-core machine into .dev/ at the
# repository's root (ignored by git, carried with `carry: [".dev"]`): the
# bench module's test binary and the variants binary of the pool as of
# HEAD (build-variants.sh base=HEAD) and, when candidate-f2-main.patch is
# there, of HEAD with it (f2m), stripped and xz-packed (~22 MB), and
# this machine's PostgreSQL (../shared/device/pg-pack.sh, ~20 MB) —
# together under the 64 MiB that travel with a call.
#
#   bench/results/issue23/device/pack.sh        # from the repository's root
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo '/.dev/' >> .git/info/exclude; }
mkdir -p .dev
(cd bench && go test -c -ldflags='-s -w' -o ../.dev/bench.test .)
# Part 1's candidate, when there is one, beside the pool as it is: the
# patch applied to HEAD and committed in a worktree of its own (the commit
# outlives the worktree, and build-variants.sh reads the package from it).
variants="base=HEAD"
patch=$root/bench/results/issue23/candidate-f2-main.patch
if [ -f "$patch" ]; then
	tmp=$(mktemp -d)
	git worktree add -q --detach "$tmp" HEAD
	git -C "$tmp" apply "$patch"
	git -C "$tmp" -c user.name=pack.sh -c user.email=pack.sh@localhost commit -qam "issue 23: candidate-f2-main.patch on $(git rev-parse --short HEAD), for the variants binary"
	variants="$variants f2m=$(git -C "$tmp" rev-parse HEAD)"
	git worktree remove --force "$tmp"
fi
(cd bench && sh results/issue23/build-variants.sh ../.dev/v.test $variants)
xz -6 -T0 -f .dev/bench.test .dev/v.test
git rev-parse HEAD > .dev/bench.commit
bash "$root/../shared/device/pg-pack.sh" .dev
du -ch .dev/* | tail -1
