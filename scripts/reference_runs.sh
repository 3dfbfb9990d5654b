#!/usr/bin/env bash
# The reference runs behind results/reference, in one go on a GPU machine: build, the GPU tests,
# compute-sanitizer on the newest kernels' tests, the presets, and the PyTorch SDPA peer in the
# same call. Everything lands in OUT_DIR (default results/reference-run) and, packed, in
# OUT_DIR.tar.gz. Run scripts/stamp_commit.sh first when the tree travels without .git.
#   bash scripts/reference_runs.sh h100    # one GPU: tests, sanitizers, h100 twice (noise), a
#                                          # deliberately slowed h100 subset, models, paper, peer
#   bash scripts/reference_runs.sh multi   # a host with several GPUs: h100 on GPU 0, then on all
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-h100}
out=${OUT_DIR:-results/reference-run}
mkdir -p "$out"
build=${BUILD_DIR:-build}
bin=$build/sweeps/decode-bench
log() { echo "== $(date -u +%H:%M:%S) $*"; }

log configure + build
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
  -DDECODE_BENCH_BUILD_TESTS="$([ "$mode" = multi ] && echo OFF || echo ON)" \
  > "$out/configure.log" 2>&1 && cmake --build "$build" -j"$(nproc)" > "$out/build.log" 2>&1 ||
  { tail -40 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/nvidia-smi.csv" 2>&1

sweep() {  # sweep NAME ARGS...: one sweep, wall time printed
  local name=$1; shift
  local t0=$SECONDS
  "$bin" sweep "$@" --output "$out/$name.json" > "$out/$name.log" 2>&1
  local rc=$?
  log "$name: rc=$rc, $((SECONDS - t0)) s; $(grep -E 'ok|failed|skipped' "$out/$name.log" | tail -1)"
}

case "$mode" in
  h100)
    if [ "${SKIP_TESTS:-0}" != 1 ]; then
      log GPU tests
      "$build/tests/decode_tests" --gtest_filter="${GPU_TEST_FILTER:-*Gpu.*:*GpuDeathTest.*}" --gtest_brief=1 > "$out/gpu-tests.log" 2>&1
      log "gpu tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$out/gpu-tests.log" | tr '\n' ' ')"
      grep -E '^\[  FAILED' "$out/gpu-tests.log" | head -20
      for tool in memcheck racecheck; do
        compute-sanitizer --tool $tool "$build/tests/decode_tests" --gtest_filter="${SANITIZER_FILTER:-*RowAttention*:*Fp8Gpu*}" \
          > "$out/sanitizer-$tool.log" 2>&1
        log "compute-sanitizer $tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool.log" | tail -1)"
      done
    fi
    sweep h100-a --preset h100
    sweep h100-b --preset h100
    DECODE_BENCH_FD_SPLIT_SCALE=0.25 sweep h100-slowed --preset h100 --experiment contiguous_long \
      --experiment single_head_long --experiment paged_vs_contiguous
    sweep models --preset models
    sweep paper --preset paper
    sweep quick --preset quick
    [ "${SKIP_PEER:-0}" = 1 ] || { log peer; python3 scripts/peer_sdpa.py --out "$out/peer-sdpa.json" > "$out/peer.log" 2>&1; tail -3 "$out/peer.log"; }
    ;;
  multi)  # one GPU against all of them (issue: many GPUs), then the noise pair and a slowed run on GPU 0
    sweep h100-gpu0 --preset h100 --device 0
    sweep h100-all --preset h100 --devices all
    sweep h100-gpu0-b --preset h100 --device 0
    DECODE_BENCH_FD_SPLIT_SCALE=0.25 sweep h100-gpu0-slowed --preset h100 --device 0 --experiment contiguous_long \
      --experiment single_head_long --experiment paged_vs_contiguous
    ;;
  *) echo "usage: reference_runs.sh h100|multi" >&2; exit 2 ;;
esac
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
log "packed $out.tar.gz"
