#!/bin/sh
# run-promptfoo.sh PROMPTFOO_DIR CONFIG_DIR SCRATCH: one headless promptfoo
# eval of CONFIG_DIR/config.yaml in a fresh directory under SCRATCH, with
# promptfoo installed by npm in PROMPTFOO_DIR (node_modules/.bin/promptfoo).
# No cache, no results database, no table, no progress bar, no telemetry,
# update check or sharing, and a fresh promptfoo config directory; nothing
# reaches the network (the echo provider). Its output goes to DIR/out.txt,
# whose summary must count 8571 passed and 1429 failed. promptfoo exits 100
# when a test fails, as 1,429 do here.
set -eu
[ $# -eq 3 ] || { echo "usage: run-promptfoo.sh PROMPTFOO_DIR CONFIG_DIR SCRATCH" >&2; exit 2; }
pf=$1 config=$2 scratch=$3
mkdir -p "$scratch"
d=$(mktemp -d "$scratch/promptfoo.XXXXXX")
cp "$config/config.yaml" "$d/config.yaml"
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_DISABLE_SHARING=1
export PROMPTFOO_CACHE_ENABLED=false PROMPTFOO_CONFIG_DIR="$d/home" NO_COLOR=1
cd "$d"
exec "$pf/node_modules/.bin/promptfoo" eval -c config.yaml --no-cache --no-write --no-table --no-progress-bar >"$d/out.txt" 2>&1
