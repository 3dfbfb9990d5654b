#!/usr/bin/env bash
# ctest: scripts/perf_gate.sh on committed SYNTHETIC results (tests/data/gate_*.json, written by
# make_synthetic_fixtures.py; no GPU). Usage: perf_gate_check.sh SOURCE_DIR DECODE_BENCH OUT_DIR
#   a noise-level change passes (exit 0), a planted 10% slowdown fails (exit 1) and is named in
#   the summary, a slower GPU of the same quality passes only with --normalize ceilings, a
#   baseline directory is searched by device name, several runs a side are compared as runs, and
#   bad input exits 2.
set -uo pipefail
src=$1 exe=$2 out=$3
data=$src/tests/data
gate=$src/scripts/perf_gate.sh
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

expect() {  # expect RC NAME args...
  local want=$1 name=$2
  shift 2
  bash "$gate" "$@" --exe "$exe" --out "$out/$name" --no-figures >"$out/$name.log" 2>&1
  local rc=$?
  [ $rc -eq "$want" ] || { cat "$out/$name.log"; fail "$name: expected exit $want, got $rc"; }
}

expect 0 noise "$data/gate_baseline.json" --candidate "$data/gate_noise.json"
grep -q "^## decode-bench compare: no regression" "$out/noise/summary.md" || fail "noise: summary does not say no regression"
[ -s "$out/noise/compare.json" ] || fail "noise: no compare.json"

expect 1 regressed "$data/gate_baseline.json" --candidate "$data/gate_regressed.json"
grep -q "^## decode-bench compare: 3 regression(s)" "$out/regressed/summary.md" || fail "regressed: summary lacks the count"
grep -q "| kernels | 3 |" "$out/regressed/summary.md" || fail "regressed: the kernels experiment is not summarised"
[ "$(grep -c REGRESSION "$out/regressed/compare.txt")" -eq 3 ] || fail "regressed: expected exactly 3 REGRESSION lines"
grep REGRESSION "$out/regressed/compare.txt" | grep -vq "^kernels/" && fail "regressed: a point outside 'kernels' was called"

# A larger threshold lets the planted 10% through.
expect 0 regressed_loose "$data/gate_baseline.json" --candidate "$data/gate_regressed.json" --threshold 0.15

# Another GPU with 0.6x the ceilings and the same kernel quality.
expect 1 other_gpu_absolute "$data/gate_baseline.json" --candidate "$data/gate_other_gpu.json"
expect 0 other_gpu_normalized "$data/gate_baseline.json" --candidate "$data/gate_other_gpu.json" --normalize ceilings
grep -q "| dram_read (GB/s) | 2000 | 1200 | 0.600 |" "$out/other_gpu_normalized/summary.md" ||
  fail "normalized: the devices' ceiling ratio is not in the summary"

# A baseline directory: the file named after the candidate's device is used.
mkdir -p "$out/baselines"
cp "$data/gate_baseline.json" "$out/baselines/synthetic-gpu-test-fixture.json"
expect 1 by_device "$out/baselines" --candidate "$data/gate_regressed.json"
expect 2 by_device_missing "$out/baselines" --candidate "$data/gate_other_gpu.json"
grep -q "no baseline for 'Synthetic GPU B" "$out/by_device_missing.log" || fail "missing per-device baseline: unclear message"

# Several runs a side: joined by commas, or a baseline directory's NAME.json and NAME-N.json.
expect 0 runs "$data/gate_baseline.json,$data/gate_noise.json" --candidate "$data/gate_noise.json,$data/gate_baseline.json"
grep -q "A: 2 runs on Synthetic GPU" "$out/runs/summary.md" || fail "runs: the summary does not count A's runs"
grep -q "B: 2 runs on Synthetic GPU" "$out/runs/summary.md" || fail "runs: the summary does not count B's runs"
expect 1 runs_regressed "$data/gate_baseline.json,$data/gate_noise.json" \
  --candidate "$data/gate_regressed.json,$data/gate_regressed.json"
cp "$data/gate_noise.json" "$out/baselines/synthetic-gpu-test-fixture-2.json"
expect 1 by_device_runs "$out/baselines" --candidate "$data/gate_regressed.json"
grep -q "A: 2 runs on Synthetic GPU" "$out/by_device_runs/summary.md" || fail "by device: NAME-2.json not taken as a run"
expect 2 runs_empty_name "$data/gate_baseline.json" --candidate "$data/gate_noise.json,,$data/gate_noise.json"
grep -q "an empty file name" "$out/runs_empty_name.log" || fail "runs: an empty name not named"
expect 2 runs_zero "$data/gate_baseline.json" --runs 0
grep -q "a whole number of runs" "$out/runs_zero.log" || fail "--runs 0: unclear message"
expect 2 runs_with_candidate "$data/gate_baseline.json" --runs 2 --candidate "$data/gate_noise.json"
grep -q "name the runs joined by commas" "$out/runs_with_candidate.log" || fail "--runs with --candidate: unclear message"

# Bad input: a malformed baseline, a missing candidate, an unknown option.
expect 2 malformed "$data/malformed_results.json" --candidate "$data/gate_noise.json"
grep -q "meta.tool_version: missing required field" "$out/malformed.log" || fail "malformed: the message does not name the field"
expect 2 missing "$data/gate_baseline.json" --candidate "$out/absent.json"
expect 2 bad_option "$data/gate_baseline.json" --candidate "$data/gate_noise.json" --frobnicate
# Without --candidate the gate runs the preset; on this machine without a GPU the run fails, and a
# failed run is exit 2 with the reason, never a pass.
if ! nvidia-smi -L >/dev/null 2>&1; then
  expect 2 no_gpu_run "$data/gate_baseline.json" --preset ci-smoke
  grep -q "the ci-smoke run failed" "$out/no_gpu_run.log" || fail "no GPU: unclear message: $(cat "$out/no_gpu_run.log")"
fi
echo "perf gate ok: $out"
