#!/usr/bin/env bash
# Packs what run16.sh needs on a bare 16-core machine into .dev/ at the
# repository's root (ignored by git, carried with `carry: [".dev"]`): the
# bench module's test binary and the variants binary of the pool as of
# HEAD (build-variants.sh base=HEAD), stripped and xz-packed (~19 MB), and
# this machine's PostgreSQL (../shared/device/pg-pack.sh, ~20 MB) —
# together under the 64 MiB that travel with a call.
#
#   bench/results/issue23/device/pack.sh        # from the repository's root
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo '/.dev/' >> .git/info/exclude; }
mkdir -p .dev
(cd bench && go test -c -ldflags='-s -w' -o ../.dev/bench.test .)
(cd bench && sh results/issue23/build-variants.sh ../.dev/v.test base=HEAD)
xz -6 -T0 -f .dev/bench.test .dev/v.test
git rev-parse HEAD > .dev/bench.commit
bash "$root/../shared/device/pg-pack.sh" .dev
du -ch .dev/* | tail -1
