#!/usr/bin/env bash
# The CI performance gate: build, run a preset on this machine's GPU, compare against a baseline
# results file, write a markdown summary and figures, exit with compare's code.
#
#   scripts/perf_gate.sh BASELINE [options] [-- extra `decode-bench sweep` arguments]
#
# BASELINE is a results JSON, several runs of one build joined by commas, or a directory holding
# the baselines of each GPU named after the device (device.name lowercased, runs of other
# characters as '-': "nvidia-h100-80gb-hbm3.json"; every "nvidia-h100-80gb-hbm3-N.json" beside it
# is another run of the same baseline build).
# Options:
#   --preset P            preset to run (default ci-smoke)
#   --runs N              run the preset N times (candidate-1.json ...), compared as N runs
#                         (decode-bench compare's runs: the interval covers their offsets)
#   --candidate FILE      compare BASELINE with FILE (or runs joined by commas): no build, no run,
#                         no GPU (what CI tests)
#   --out DIR             output directory (default perf-gate): candidate.json, summary.md,
#                         compare.txt, compare.json, figures/
#   --threshold T         allowed relative regression (default 0.05)
#   --normalize ceilings  compare fractions of each run's own ceilings (baseline from another GPU)
#   --exe PATH            decode-bench to use (default BUILD_DIR/sweeps/decode-bench, built if needed)
#   --no-figures          skip `decode-bench plot --compare` (it needs python3 with matplotlib)
# Environment: BUILD_DIR (default build), CUDA_ARCH (default 90).
# Exit: 0 no regression, 1 a regression (significant and beyond the threshold), 2 bad input,
#       a failed build or a failed run (no valid candidate to judge).
# Noisy points (interval too wide to judge) do not fail the gate; they are listed in the summary.
# Add repetitions for them: `-- --repetitions 20` (docs/ci.md, docs/harness.md "Timing flags").
set -uo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "perf_gate: $*" >&2; exit 2; }

[ $# -ge 1 ] || { usage >&2; exit 2; }
case $1 in -h|--help) usage; exit 0 ;; esac
baseline=$1
shift
preset=ci-smoke candidate="" out=perf-gate threshold=0.05 normalize=none exe="" figures=1 runs=1
sweep_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --preset) preset=${2:?--preset needs a value}; shift 2 ;;
    --candidate) candidate=${2:?--candidate needs a file}; shift 2 ;;
    --runs) runs=${2:?--runs needs a count}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --threshold) threshold=${2:?--threshold needs a value}; shift 2 ;;
    --normalize) normalize=${2:?--normalize needs a value}; shift 2 ;;
    --exe) exe=${2:?--exe needs a path}; shift 2 ;;
    --no-figures) figures=0; shift ;;
    --) shift; sweep_args=("$@"); break ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs '$runs': a whole number of runs, 1 or more"
[ -z "$candidate" ] || [ "$runs" -eq 1 ] || die "--runs runs the preset; with --candidate, name the runs joined by commas"
# Each file of a comma-joined list must exist; an empty name is refused.
check_files() {  # check_files WHAT LIST
  local f files
  case ",$2," in *,,*) die "$1 '$2': an empty file name in the comma-separated runs" ;; esac
  IFS=, read -ra files <<<"$2"
  for f in "${files[@]}"; do [ -e "$f" ] || die "$1 '$f' does not exist"; done
}
check_files baseline "$baseline"
mkdir -p "$out" || die "cannot create '$out'"

build_dir=${BUILD_DIR:-build}
if [ -z "$exe" ]; then
  exe=$build_dir/sweeps/decode-bench
  if [ -z "$candidate" ] || [ ! -x "$exe" ]; then
    # ensure_deps.sh exits 1 when something is missing; in a subshell first, so that becomes
    # exit 2 here (1 would read as a regression), then sourced for its PATH settings.
    (DB_NEED_MATPLOTLIB=$figures source scripts/ensure_deps.sh >/dev/null) || die "missing build dependencies (see above)"
    DB_NEED_MATPLOTLIB=$figures source scripts/ensure_deps.sh >/dev/null
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DDECODE_BENCH_PTX_ONLY=OFF \
      -DDECODE_BENCH_BUILD_TESTS=OFF >"$out/build.log" 2>&1 &&
      cmake --build "$build_dir" -j"$(nproc)" --target decode-bench >>"$out/build.log" 2>&1 ||
      { tail -n 40 "$out/build.log" >&2; die "build failed (log: $out/build.log)"; }
  fi
fi
[ -x "$exe" ] || die "decode-bench not found at '$exe'"

if [ -z "$candidate" ]; then
  for ((i = 1; i <= runs; i++)); do
    run_file=$out/candidate.json
    [ "$runs" -eq 1 ] || run_file=$out/candidate-$i.json
    echo "perf_gate: running preset $preset ($exe sweep --preset $preset --output $run_file ${sweep_args[*]})"
    "$exe" sweep --preset "$preset" --output "$run_file" "${sweep_args[@]}"
    rc=$?
    [ $rc -eq 0 ] || die "the $preset run failed (exit $rc): no candidate to judge"
    candidate=${candidate:+$candidate,}$run_file
  done
fi
check_files candidate "$candidate"

if [ -d "$baseline" ]; then
  first=${candidate%%,*}
  name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"]["name"])' "$first") ||
    die "cannot read device.name from $first"
  slug=$(printf '%s' "$name" | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9]+/-/g; s/^-+//; s/-+$//')
  found=""
  for f in "$baseline/$slug.json" $(ls "$baseline" | grep -E "^$slug-[0-9]+\.json$" | sort -V); do
    f=${f#"$baseline/"}
    [ -f "$baseline/$f" ] && found=${found:+$found,}$baseline/$f
  done
  [ -n "$found" ] || die "no baseline for '$name' in $baseline (expected $baseline/$slug.json or $slug-N.json)"
  baseline=$found
fi

echo "perf_gate: comparing $baseline (A) with $candidate (B)"
"$exe" compare "$baseline" "$candidate" --threshold "$threshold" --normalize "$normalize" \
  --markdown-out "$out/summary.md" --json-out "$out/compare.json" | tee "$out/compare.txt"
rc=${PIPESTATUS[0]}
if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
  exit 2
fi

if [ $figures = 1 ]; then
  if "$exe" plot "$baseline" "$candidate" --compare --normalize "$normalize" --threshold "$threshold" \
    --out "$out/figures" >"$out/plot.log" 2>&1; then
    { echo; echo "Figures: \`figures/compare_ratio_by_experiment.png\`, \`figures/roofline_compare.png\` (artifacts)."; } >>"$out/summary.md"
  else
    echo "perf_gate: figures failed (see $out/plot.log); the verdict stands" >&2
    { echo; echo "Figures could not be drawn (plot.log)."; } >>"$out/summary.md"
  fi
fi
{ echo; echo "Baseline \`$baseline\`, candidate \`$candidate\`."; } >>"$out/summary.md"
echo "perf_gate: exit $rc ($([ $rc -eq 0 ] && echo 'no regression' || echo 'regression')); summary: $out/summary.md"
exit $rc
