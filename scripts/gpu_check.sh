#!/usr/bin/env bash
# On a GPU machine, the GPU test tiers in one command (docs/testing.md): configure and build, run
# a tier through ctest, run the gpu_sanitize tests under compute-sanitizer memcheck and racecheck,
# optionally measure ceilings and run presets, and write OUT_DIR/summary.md (commit, GPU, per tier
# the passed / failed / skipped tests, wall seconds, failed names and the slowest ten, the
# sanitizers' summaries). Logs land in OUT_DIR too.
#   bash scripts/gpu_check.sh --quick|--full [--parts P,Q] [--presets P1,P2] [--skip-build]
#     --quick        the gpu_quick tier
#     --full         the gpu tier, then the host tier (every test)
#     --parts P,Q    with --full: only these of its parts, of gpu, host and sanitizers (default all
#                    three), so that the whole suite can run as two commands on one build, each
#                    shorter than a time limit (the second with --skip-build)
#     --presets P,Q  then ceilings, each preset's sweep and figures, and the CUPTI self-test against ncu
#     --skip-build   use BUILD_DIR as it is
# Environment: OUT_DIR (default results/gpu-check), BUILD_DIR (build), CUDA_ARCH (90),
# CTEST_JOBS (3), TEST_TIMEOUT (900 s a test), SANITIZER_TIMEOUT (600 s a tool),
# SKIP_SANITIZERS=1 (no sanitizer runs, said so in the summary).
# Exit 0 when every test passed or skipped and no sanitizer found an error, 1 otherwise (a failed
# build, test, sanitizer run or preset, or a tier where nothing passed), 2 for bad arguments.
set -uo pipefail

usage_line="usage: gpu_check.sh --quick|--full [--parts P,Q] [--presets P1,P2] [--skip-build]"
refuse() {
  echo "gpu_check.sh: $*" >&2
  echo "$usage_line" >&2
  exit 2
}

mode=""
presets=""
presets_given=0
parts=""
parts_given=0
skip_build=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick | --full)
      [ -z "$mode" ] || refuse "give one of --quick and --full, not both"
      mode=${1#--}
      ;;
    --presets)
      [ $# -ge 2 ] || refuse "--presets needs a comma-separated list of presets"
      presets=$2 presets_given=1
      shift
      ;;
    --presets=*) presets=${1#--presets=} presets_given=1 ;;
    --parts)
      [ $# -ge 2 ] || refuse "--parts needs a comma-separated list of gpu, host and sanitizers"
      parts=$2 parts_given=1
      shift
      ;;
    --parts=*) parts=${1#--parts=} parts_given=1 ;;
    --skip-build) skip_build=1 ;;
    -h | --help)
      sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) refuse "unknown argument '$1'" ;;
  esac
  shift
done
[ -n "$mode" ] || refuse "give --quick or --full"
# The parts of --full to run: run_gpu, run_host, run_sanitizers (1 or 0).
run_gpu=1 run_host=1 run_sanitizers=1
if [ $parts_given = 1 ]; then
  [ "$mode" = full ] || refuse "--parts goes with --full (--quick runs the gpu_quick tier and the sanitizers)"
  run_gpu=0 run_host=0 run_sanitizers=0
  IFS=, read -r -a part_list <<<"$parts,"
  [ ${#part_list[@]} -gt 0 ] || refuse "--parts '$parts': name at least one of gpu, host and sanitizers"
  for p in "${part_list[@]}"; do
    case "$p" in
      gpu) run_gpu=1 ;;
      host) run_host=1 ;;
      sanitizers) run_sanitizers=1 ;;
      *) refuse "--parts '$parts': '$p' is not one of gpu, host and sanitizers" ;;
    esac
  done
fi
preset_list=()
if [ $presets_given = 1 ]; then
  IFS=, read -r -a preset_list <<<"$presets,"  # the trailing comma keeps a trailing empty name
  for p in "${preset_list[@]}"; do
    [[ "$p" =~ ^[A-Za-z0-9_.-]+$ ]] || refuse "--presets '$presets': '$p' is not a preset name"
  done
fi

cd "$(dirname "$0")/.."
out=${OUT_DIR:-results/gpu-check}
build=${BUILD_DIR:-build}
jobs=${CTEST_JOBS:-3}
mkdir -p "$out"
out=$(cd "$out" && pwd)  # ctest writes its JUnit files from the build directory
bin=$build/sweeps/decode-bench
status=0
log() { printf '== %s %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$out/gpu-check.log"; }
: >"$out/gpu-check.log"

# The commit: git's, or the stamp scripts/stamp_commit.sh leaves in a tree copied without .git.
# The stamp first, as cmake/GitVersion.cmake reads it: a copied tree can carry a stale .git.
if [ -s .decode-bench-commit ]; then
  commit="$(head -1 .decode-bench-commit) (.decode-bench-commit$(sed -n '2s/^/, /p' .decode-bench-commit))"
elif commit=$(git rev-parse HEAD 2>/dev/null); then
  [ -z "$(git status --porcelain --untracked-files=no)" ] || commit="$commit (uncommitted changes)"
else
  commit="unknown (no .git, no .decode-bench-commit: scripts/stamp_commit.sh)"
fi
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
gpu=${gpu:-"none found by nvidia-smi"}
{
  echo "# gpu_check.sh --$mode$([ $parts_given = 1 ] && echo " --parts $parts")"
  echo
  echo "- commit: $commit"
  echo "- GPU: $gpu"
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ), CUDA_ARCH ${CUDA_ARCH:-90}, ctest -j$jobs"
  echo
} >"$out/summary.md"
log "gpu_check.sh --$mode$([ $parts_given = 1 ] && echo " --parts $parts") at $commit on $gpu"

# configure + build
if [ "$skip_build" = 0 ]; then
  t0=$SECONDS
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DDECODE_BENCH_PTX_ONLY=OFF \
    -DDECODE_BENCH_BUILD_TESTS=ON >"$out/configure.log" 2>&1 &&
    cmake --build "$build" -j"$(nproc)" >"$out/build.log" 2>&1
  rc=$?
  echo "- build: rc $rc, $((SECONDS - t0)) s (configure.log, build.log)" >>"$out/summary.md"
  log "build: rc $rc, $((SECONDS - t0)) s"
  if [ $rc -ne 0 ]; then
    tail -40 "$out/build.log" "$out/configure.log" 2>/dev/null
    exit 1
  fi
else
  echo "- build: skipped (--skip-build, $build as it is)" >>"$out/summary.md"
fi
echo >>"$out/summary.md"

# One tier through ctest: its log, its JUnit file, and its section of the summary.
run_tier() {  # run_tier NAME LABEL
  local name=$1 label=$2 t0=$SECONDS rc
  log "tier $name (ctest -L '^$label\$' -j$jobs)"
  ctest --test-dir "$build" -L "^$label\$" -j"$jobs" --timeout "${TEST_TIMEOUT:-900}" --output-on-failure \
    --output-junit "$out/ctest-$name.xml" >"$out/ctest-$name.log" 2>&1
  rc=$?
  python3 scripts/ctest_summary.py "$out/ctest-$name.xml" "$name" $((SECONDS - t0)) --log "$out/ctest-$name.log" \
    >"$out/tier-$name.md" || status=1
  [ -s "$out/tier-$name.md" ] || printf '### %s: no results (ctest rc %s, ctest-%s.log)\n\n' "$name" $rc "$name" >"$out/tier-$name.md"
  [ $rc -eq 0 ] || status=1
  cat "$out/tier-$name.md" >>"$out/summary.md"
  log "$(head -1 "$out/tier-$name.md" | sed 's/^### //')"
  grep -E '^- `' "$out/tier-$name.md" | head -20
}

if [ "$mode" = quick ]; then
  run_tier gpu_quick gpu_quick
else
  [ $run_gpu = 0 ] || run_tier gpu gpu
  [ $run_host = 0 ] || run_tier host host
fi

# compute-sanitizer memcheck and racecheck on the gpu_sanitize tests, one process each.
sanitizer() {  # sanitizer TOOL FILTER
  local tool=$1 filter=$2 t0=$SECONDS rc line errors
  timeout "${SANITIZER_TIMEOUT:-600}" "$sanitizer_exe" --tool "$tool" --error-exitcode 86 \
    "$build/tests/decode_tests" --gtest_filter="$filter" >"$out/sanitizer-$tool.log" 2>&1
  rc=$?
  line=$(grep -E '(ERROR|RACECHECK) SUMMARY' "$out/sanitizer-$tool.log" | tail -1 | sed 's/^=* *//')
  errors=$(grep -oE '[0-9]+ error' <<<"$line" | grep -oE '^[0-9]+')
  local tests
  tests=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/sanitizer-$tool.log" | tr -s ' ' | paste -sd ' ')
  local verdict=ok
  if [ $rc -eq 124 ]; then
    verdict="TIMED OUT after ${SANITIZER_TIMEOUT:-600} s"
  elif [ -z "$line" ]; then
    verdict="FAILED: no sanitizer summary (rc $rc)"
  elif [ "${errors:-1}" != 0 ] || [ $rc -ne 0 ]; then
    verdict="FAILED (rc $rc)"
  fi
  [ "$verdict" = ok ] || status=1
  echo "- $tool: $verdict; ${line:-no summary}; tests: ${tests:-none reported}; $((SECONDS - t0)) s (sanitizer-$tool.log)" >>"$out/summary.md"
  log "compute-sanitizer $tool: $verdict; $line; $((SECONDS - t0)) s"
}

{
  echo "### compute-sanitizer on the gpu_sanitize tests"
  echo
} >>"$out/summary.md"
sanitizer_exe=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
filter=$(ctest --test-dir "$build" -N -L '^gpu_sanitize$' | sed -n 's/^ *Test *#[0-9]*: *//p' | paste -sd :)
if [ "${SKIP_SANITIZERS:-0}" = 1 ]; then
  echo "- not run (SKIP_SANITIZERS=1)" >>"$out/summary.md"
elif [ $run_sanitizers = 0 ]; then
  echo "- not run (--parts $parts)" >>"$out/summary.md"
elif [ -z "$filter" ]; then
  echo "- FAILED: no test is labelled gpu_sanitize" >>"$out/summary.md"
  status=1
elif [ ! -x "$sanitizer_exe" ]; then
  echo "- FAILED: compute-sanitizer not found (SKIP_SANITIZERS=1 to run without it)" >>"$out/summary.md"
  status=1
else
  echo "- filter: \`$filter\`" >>"$out/summary.md"
  for tool in memcheck racecheck; do sanitizer "$tool" "$filter"; done
fi
echo >>"$out/summary.md"

# Optional: ceilings, presets and their figures, CUPTI against ncu (docs/counters.md).
if [ ${#preset_list[@]} -gt 0 ]; then
  echo "### ceilings and presets" >>"$out/summary.md"
  echo >>"$out/summary.md"
  step() {  # step NAME COMMAND...: runs it into NAME.log, a summary line with its rc and seconds
    local name=$1 t0=$SECONDS rc
    shift
    "$@" >"$out/$name.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || status=1
    echo "- $name: rc $rc, $((SECONDS - t0)) s; $(grep -vE '^\s*$' "$out/$name.log" | tail -1)" >>"$out/summary.md"
    log "$name: rc $rc, $((SECONDS - t0)) s"
  }
  step ceilings "$bin" ceilings --output "$out/ceilings.json"
  for preset in "${preset_list[@]}"; do
    step "sweep-$preset" "$bin" sweep --preset "$preset" --output "$out/$preset.json"
    step "plot-$preset" "$bin" plot "$out/$preset.json" --out "$out/figures-$preset"
  done
  step selftest "$bin" profile-selftest
  metrics=$(grep -E '^metrics: ' "$out/selftest.log" | head -1 | sed 's/^metrics: //' | tr -d ' ')
  if [ -n "$metrics" ] && command -v ncu >/dev/null; then
    ncu --clock-control none --metrics "$metrics" --csv "$bin" profile-selftest --no-counters >"$out/ncu.csv" 2>"$out/ncu.err"
    step ncu-crosscheck python3 scripts/ncu_crosscheck.py "$out/selftest.log" "$out/ncu.csv"
  else
    echo "- ncu cross-check: not run (no metrics line or no ncu)" >>"$out/summary.md"
  fi
  echo >>"$out/summary.md"
fi

echo "Result: $([ $status -eq 0 ] && echo PASSED || echo FAILED)" >>"$out/summary.md"
log "result: $([ $status -eq 0 ] && echo PASSED || echo FAILED); $out/summary.md"
exit $status
