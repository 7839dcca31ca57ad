#!/usr/bin/env bash
# Packs what call8.sh needs into .dev/ (ignored by git, carried with
# `carry: [".dev"]`): the bench module's test binary at HEAD and before
# the homes change (homes16-pack.sh), and this machine's PostgreSQL
# (../shared/device/pg-pack.sh); about 45 MB in all.
#
#   bash bench/results/issue23/device/call8-pack.sh    # from the repository's root
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
bash bench/results/issue23/device/homes16-pack.sh
git rev-parse HEAD > .dev/bench.commit
bash "$root/../shared/device/pg-pack.sh" .dev
du -ch .dev/* | tail -1
