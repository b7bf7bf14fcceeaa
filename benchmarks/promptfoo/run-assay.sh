#!/bin/sh
# run-assay.sh ASSAY WORKLOAD_DIR SCRATCH: one run of the Assay side in a
# fresh directory (a copy of the workload, a new store, a new runs root)
# under SCRATCH, which it leaves in place (delete SCRATCH after measuring:
# creating files right after a big deletion is slow on ext4). Its output
# goes to DIR/out.txt; the tally line there must read 8571/10000.
set -eu
[ $# -eq 3 ] || { echo "usage: run-assay.sh ASSAY WORKLOAD_DIR SCRATCH" >&2; exit 2; }
assay=$1 workload=$2 scratch=$3
mkdir -p "$scratch"
d=$(mktemp -d "$scratch/assay.XXXXXX")
cp -R "$workload" "$d/w"
exec "$assay" run "$d/w/promptfoo.bench.yaml" --dir "$d/.algal" --out "$d/runs" >"$d/out.txt" 2>&1
