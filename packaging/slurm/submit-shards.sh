#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs a scan as N parts on a Slurm cluster and merges them: a job array of N tasks (hitscope-shard.sbatch), then
# one merge job that starts when every task succeeded (hitscope-merge.sbatch).
#   submit-shards.sh N OUTDIR SCAN_ARGS...
#   e.g. submit-shards.sh 64 /share/results/scan-1 -r /share/rules/all.yar /share/files
# SCAN_ARGS are hitscope-cli scan's (rules, options, paths; --json and --shard are added). OUTDIR must be on a file
# system every node sees. sbatch options come from the environment (SBATCH_PARTITION, SBATCH_TIMELIMIT, ...; see
# sbatch(1); GPUs: SBATCH_GPUS_PER_TASK, and --devices in SCAN_ARGS naming the devices the task may use, since
# Vulkan lists every GPU of the node); HITSCOPE_CLI names the executable on the nodes. Prints the array's and the
# merge's job ids.
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '3,10p' "$0" >&2
    exit 1
fi
n=$1
out=$2
shift 2
case "$n" in
    '' | *[!0-9]* | 0) echo "submit-shards.sh: N must be a positive number, not '$n'" >&2; exit 1 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
array=$(sbatch --parsable --array="1-$n" --output="$out/part-%a-of-$n.log" \
    "$here/hitscope-shard.sbatch" "$out" "$n" "$@")
array=${array%%;*}
# A failed task makes the merge's dependency impossible: Slurm cancels it instead of leaving it pending.
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes --output="$out/merge.log" \
    "$here/hitscope-merge.sbatch" "$out" "$n")
merge=${merge%%;*}
echo "$array $merge"
