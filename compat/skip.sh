#!/usr/bin/env bash
# skip.sh prints the -skip pattern for the tests in pgxpool/skipped.txt.
set -euo pipefail
cd "$(dirname "$0")"
names=$(grep -v '^#' pgxpool/skipped.txt | awk 'NF { print $1 }' | paste -sd'|')
if [ -z "$names" ]; then echo '^$'; else echo "^($names)\$"; fi
