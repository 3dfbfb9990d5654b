#!/usr/bin/env bash
# The reference set of one GPU model, in one go on a GPU machine: build, every preset embedded in
# the binary, the ceilings, the PyTorch SDPA peer, figures and the compare tables. OUT holds
# exactly the layout of results/reference/<gpu>/ (results/reference/README.md), so that it can
# replace that folder whole:
#   rm -rf results/reference/h100 && cp -r OUT results/reference/h100
#   python3 scripts/reference_index.py --write && python3 scripts/readme_tables.py --write
# Logs (build, GPU tests, sanitizers, nvidia-smi, each command's output) go to LOG_DIR, outside OUT.
#
#   OUT=/tmp/ref-h100 bash scripts/reference_runs.sh
#
# Environment:
#   OUT          output folder (default results/reference-run); must be empty or absent
#   LOG_DIR      logs (default OUT.logs)
#   BUILD_DIR    build folder (default build); CUDA_ARCH (default 90)
#   SKIP_TESTS=1 skip the GPU tests and compute-sanitizer
#   SKIP_PEER=1  skip scripts/peer_sdpa.py (it needs PyTorch with CUDA)
#   DECODE_BENCH_PYTHON  a python3 with matplotlib for `decode-bench plot` (docs: plots/README.md)
# Run scripts/stamp_commit.sh first when the tree travels without .git, so that every file's
# meta.git names the commit. Exit: 0 when every step succeeded, 1 when one failed (the others
# still run; the failures are listed at the end), 2 on bad usage.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 0 ] || { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
out=${OUT:-results/reference-run}
logs=${LOG_DIR:-$out.logs}
build=${BUILD_DIR:-build}
bin=$build/sweeps/decode-bench
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
  echo "reference_runs: OUT=$out is not empty (the set must be whole: use a new folder)" >&2
  exit 2
fi
mkdir -p "$out" "$logs" || exit 2
failed=()
log() { echo "== $(date -u +%H:%M:%S) $*"; }
# step NAME CMD...: runs CMD with its output in LOG_DIR/NAME.log; records a failure by name.
step() {
  local name=$1; shift
  local t0=$SECONDS
  "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  log "$name: rc=$rc, $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || failed+=("$name (rc $rc, $logs/$name.log)")
  return $rc
}

log configure + build
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DDECODE_BENCH_PTX_ONLY=OFF \
  -DDECODE_BENCH_BUILD_TESTS="$([ "${SKIP_TESTS:-0}" = 1 ] && echo OFF || echo ON)" > "$logs/configure.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" > "$logs/build.log" 2>&1 || { tail -40 "$logs/build.log"; exit 1; }
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv \
  > "$logs/nvidia-smi.csv" 2>&1

if [ "${SKIP_TESTS:-0}" != 1 ]; then
  step gpu-tests "$build/tests/decode_tests" --gtest_filter="${GPU_TEST_FILTER:-*Gpu*}" --gtest_brief=1
  for tool in memcheck racecheck; do
    step "sanitizer-$tool" compute-sanitizer --tool $tool "$build/tests/decode_tests" \
      --gtest_filter="${SANITIZER_FILTER:-*RowAttention*:*Fp8Gpu*:*SharedPrefix*Gpu*}"
  done
fi

# Every preset the binary embeds, by the name `decode-bench list` prints first on its line.
mapfile -t presets < <("$bin" list | sed -n 's/^\([a-z0-9_-]*\) (.*/\1/p')
[ ${#presets[@]} -gt 0 ] || { echo "reference_runs: \`$bin list\` named no preset" >&2; exit 1; }
log "presets: ${presets[*]}"

step ceilings "$bin" ceilings --output "$out/ceilings.json"
for p in "${presets[@]}"; do
  args=(--preset "$p")
  [ "$p" = cascade ] && args+=(--no-counters)  # 150 points of up to 17 GB: times only
  step "sweep-$p" "$bin" sweep "${args[@]}" --output "$out/$p.json"
done
# The h100 preset's shared-prefix experiment alone (batch decode and the composed kernels with
# counters): the shared-prefix figures and bound table read it.
step sweep-shared-prefix "$bin" sweep --preset h100 --experiment shared_prefix --output "$out/shared-prefix.json"
if [ "${SKIP_PEER:-0}" != 1 ]; then
  step peer-sdpa python3 scripts/peer_sdpa.py --shapes all --out "$out/peer-sdpa.json"
fi

for f in "$out"/*.json; do
  name=$(basename "$f" .json)
  case $name in ceilings|peer-sdpa) continue ;; esac
  step "plot-$name" "$bin" plot "$f" --out "$out/figures/$name"
done

# The folder this set replaces, results/reference/NAME: REF_NAME, else the GPU's model from the
# ceilings' device name ("NVIDIA H100 80GB HBM3" -> h100), else the whole name as a slug.
name=${REF_NAME:-$(python3 -c 'import json,re,sys
n=json.load(open(sys.argv[1]))["device"]["name"].lower()
m=re.search(r"\b([a-z]+[0-9]+[a-z]*)\b", n.replace("nvidia", ""))
print(m.group(1) if m else re.sub("[^a-z0-9]+", "-", n).strip("-"))' "$out/ceilings.json" 2>/dev/null)}
ref=results/reference/${name:-unknown}

mkdir -p "$out/compare"
# compare FILE.md CMD...: CMD's standard output is the table, under a comment line with CMD as it
# reads against the committed folder ($ref); returns CMD's exit code.
compare() {
  local file=$1; shift
  local shown="$*"
  "$@" > "$logs/compare-${file%.md}.log" 2>&1
  local rc=$?
  log "compare $file: rc=$rc"
  { echo "<!-- ${shown//$out/$ref} -->"; cat "$logs/compare-${file%.md}.log"; } > "$out/compare/$file"
  return $rc
}
if [ -f "$out/peer.json" ] && [ -f "$out/peer-sdpa.json" ]; then
  compare peer-sdpa.md python3 scripts/peer_table.py "$out/peer.json" --peer "$out/peer-sdpa.json" --markdown ||
    failed+=("compare peer-sdpa.md")
fi
if [ -f "$out/shared-prefix.json" ]; then
  compare shared-prefix-bounds.md python3 scripts/bound_table.py "$out/shared-prefix.json" \
    --experiment shared_prefix --kernel shared_prefix || failed+=("compare shared-prefix-bounds.md")
fi
# The perf gate's committed baseline for this GPU (scripts/perf_gate.sh names it after the device)
# against this run's ci-smoke; exit 1 is a verdict (a regression), not a failed step.
device=$(python3 -c 'import json,re,sys; n=json.load(open(sys.argv[1]))["device"]["name"]; print(re.sub("[^a-z0-9]+","-",n.lower()).strip("-"))' \
  "$out/ci-smoke.json" 2>/dev/null)
baseline=results/reference/ci-smoke/$device.json
if [ -n "$device" ] && [ -f "$baseline" ]; then
  compare ci-smoke-vs-baseline.md "$bin" compare "$baseline" "$out/ci-smoke.json" --format markdown
  rc=$?
  [ $rc -le 1 ] || failed+=("compare ci-smoke-vs-baseline.md (rc $rc)")
fi

log "done: $out, to replace $ref (logs in $logs)"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'reference_runs: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
