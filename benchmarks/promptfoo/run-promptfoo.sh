#!/bin/sh
# run-promptfoo.sh PROMPTFOO_DIR CONFIG_DIR SCRATCH [-o]: one headless promptfoo
# eval of CONFIG_DIR/config.yaml in a fresh directory under SCRATCH, with
# promptfoo installed by npm in PROMPTFOO_DIR (node_modules/.bin/promptfoo).
# No cache, no results database, no table, no progress bar, no telemetry,
# update check or sharing, and a fresh promptfoo config directory; nothing
# reaches the network (the echo provider). Its output goes to DIR/out.txt
# (under load promptfoo may exit before its summary is flushed there:
# "closeLogger() timed out during shutdown"); with -o it also writes every
# result to DIR/results.json, whose stats must count 8571 successes and
# 1429 failures. promptfoo exits 100 when a test fails, as 1,429 do here.
set -eu
[ $# -eq 3 ] || [ $# -eq 4 ] && [ "${4:--o}" = -o ] || { echo "usage: run-promptfoo.sh PROMPTFOO_DIR CONFIG_DIR SCRATCH [-o]" >&2; exit 2; }
pf=$1 config=$2 scratch=$3
mkdir -p "$scratch"
d=$(mktemp -d "$scratch/promptfoo.XXXXXX")
cp "$config/config.yaml" "$d/config.yaml"
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_DISABLE_SHARING=1
export PROMPTFOO_CACHE_ENABLED=false PROMPTFOO_CONFIG_DIR="$d/home" NO_COLOR=1
cd "$d"
set -- eval -c config.yaml --no-cache --no-write --no-table --no-progress-bar ${4:+-o results.json}
exec "$pf/node_modules/.bin/promptfoo" "$@" >"$d/out.txt" 2>&1
