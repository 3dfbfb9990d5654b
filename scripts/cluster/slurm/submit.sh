#!/usr/bin/env bash
# Submits a sweep as a Slurm job array of N shards plus a merge job that runs once they end.
#   scripts/cluster/slurm/submit.sh N OUT_DIR [decode-bench sweep arguments...]
#   e.g. scripts/cluster/slurm/submit.sh 8 /shared/runs/h100 --preset h100
# Environment: DECODE_BENCH (the executable, default decode-bench on PATH; give an absolute path
# on a shared file system), SBATCH_ARGS (extra sbatch options for both jobs, e.g. "-p gpu -A proj"),
# ARRAY_SBATCH_ARGS (extra options for the array only, e.g. "--gpus-per-task=0" for capacity points).
# Prints "ARRAY_JOB_ID MERGE_JOB_ID".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
count=${1:?usage: submit.sh SHARDS OUT_DIR [sweep arguments...]}
out_dir=${2:?usage: submit.sh SHARDS OUT_DIR [sweep arguments...]}
shift 2
if ! [[ $count =~ ^[1-9][0-9]*$ ]]; then echo "submit.sh: SHARDS must be a positive integer, got '$count'" >&2; exit 2; fi
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
export DECODE_BENCH=${DECODE_BENCH:-decode-bench}
# shellcheck disable=SC2086  # SBATCH_ARGS are words on purpose
array=$(sbatch --parsable --export=ALL --chdir="$out_dir" --array=0-$((count - 1)) ${SBATCH_ARGS:-} ${ARRAY_SBATCH_ARGS:-} \
  "$here/sweep_array.sbatch" "$out_dir" "$@")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable --export=ALL --chdir="$out_dir" --dependency=afterany:"$array" ${SBATCH_ARGS:-} \
  "$here/merge.sbatch" "$out_dir" "$count")
merge=${merge%%;*}
echo "$array $merge"
