#!/usr/bin/env bash
# ctest: what scripts/gpu_check.sh decides without a GPU. Usage: gpu_check_check.sh SOURCE_DIR OUT_DIR
#   bad arguments exit 2 naming the argument, before anything is built or written (--parts: only
#   with --full, only gpu, host and sanitizers); --help exits 0;
#   scripts/ctest_summary.py (its per-tier summary) counts the passed / failed / skipped tests of
#   a real ctest run (a tiny project of such tests), names the failed ones with ctest's reason,
#   orders the slowest, and exits 1 when a test failed or none passed, 2 when a file is unreadable.
set -uo pipefail
src=$1 out=$2
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

refused() {  # refused WHAT args...: exit 2, the message names WHAT, nothing written
  local what=$1
  shift
  local output rc
  output=$(OUT_DIR="$out/never" BUILD_DIR="$out/never-build" bash "$src/scripts/gpu_check.sh" "$@" 2>&1)
  rc=$?
  [ $rc -eq 2 ] || fail "gpu_check.sh $*: expected exit 2, got $rc: $output"
  grep -qF -- "$what" <<<"$output" || fail "gpu_check.sh $*: the message does not name '$what': $output"
  grep -qF "usage: gpu_check.sh" <<<"$output" || fail "gpu_check.sh $*: no usage line: $output"
  [ ! -e "$out/never" ] && [ ! -e "$out/never-build" ] || fail "gpu_check.sh $*: wrote something before refusing"
}

refused "--bogus" --bogus
refused "--bogus" --quick --bogus
refused "--quick or --full"
refused "--quick or --full" --skip-build
refused "not both" --quick --full
refused "--presets needs" --full --presets
refused "'' is not a preset name" --quick --presets ""
refused "'' is not a preset name" --quick --presets=quick,,h100
refused "'a b' is not a preset name" --quick --presets "a b"
refused "extra" --quick extra
refused "--parts goes with --full" --quick --parts gpu
refused "--parts needs" --full --parts
refused "'bogus' is not one of gpu, host and sanitizers" --full --parts gpu,bogus
refused "'' is not one of gpu, host and sanitizers" --full --parts=
refused "'' is not one of gpu, host and sanitizers" --full --parts gpu,,host

help=$(bash "$src/scripts/gpu_check.sh" --help 2>&1) || fail "--help: exit $?"
grep -qF -- "--quick|--full [--parts P,Q] [--presets P1,P2] [--skip-build]" <<<"$help" || fail "--help does not show the usage: $help"

# ctest_summary.py on a JUnit file and log of this ctest: a tiny project whose tests pass, fail,
# time out, crash and skip (SKIP_RETURN_CODE, as GPU tests report themselves without a GPU).
mkdir -p "$out/tiers"
cat >"$out/tiers/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(tiers NONE)
enable_testing()
add_test(NAME passes COMMAND true)
add_test(NAME passes_slowly COMMAND sleep 3)
add_test(NAME fails COMMAND false)
add_test(NAME times_out COMMAND sleep 30)
set_tests_properties(times_out PROPERTIES TIMEOUT 1)
add_test(NAME crashes COMMAND sh -c "kill -SEGV \$\$")
add_test(NAME skips COMMAND sh -c "exit 77")
set_tests_properties(skips PROPERTIES SKIP_RETURN_CODE 77)
CMAKE
cmake -S "$out/tiers" -B "$out/tiers/build" >"$out/tiers/configure.log" 2>&1 || fail "the tiny project: $(cat "$out/tiers/configure.log")"
ctest --test-dir "$out/tiers/build" -j3 --output-junit "$out/tiers/junit.xml" >"$out/tiers/ctest.log" 2>&1
[ -s "$out/tiers/junit.xml" ] || fail "ctest wrote no JUnit file: $(cat "$out/tiers/ctest.log")"

summary() {  # summary WANT_RC ARGS...: ctest_summary.py's output in $out/summary.md
  local want=$1
  shift
  python3 "$src/scripts/ctest_summary.py" "$@" >"$out/summary.md" 2>"$out/summary.err"
  local rc=$?
  [ $rc -eq "$want" ] || fail "ctest_summary.py $*: expected exit $want, got $rc: $(cat "$out/summary.md" "$out/summary.err")"
}

summary 1 "$out/tiers/junit.xml" gpu 12 --log "$out/tiers/ctest.log"
head -1 "$out/summary.md" | grep -qxF "### gpu: 2 passed, 3 failed, 1 skipped of 6, 12 s wall" ||
  fail "heading: $(head -1 "$out/summary.md")"
for failed in '`fails` (Failed,' '`times_out` (Timeout,' '`crashes` (SEGFAULT,'; do
  grep -qF -- "- $failed" "$out/summary.md" || fail "no line '- $failed': $(cat "$out/summary.md")"
done
[ "$(grep -c '^| `' "$out/summary.md")" -eq 6 ] || fail "the slowest table does not hold the six tests"
# 3 s against at most the 1 s timeout: the order does not hang on timing noise.
grep -m1 '^| `' "$out/summary.md" | grep -q '^| `passes_slowly` | 3\.' || fail "slowest first: $(grep -m1 '^| `' "$out/summary.md")"
# Without the log the failures are still named, with the JUnit file's reason.
summary 1 "$out/tiers/junit.xml" gpu 12
grep -qF -- '- `times_out` (' "$out/summary.md" || fail "without --log: $(cat "$out/summary.md")"

# Every test skipped (a GPU tier without a GPU): nothing passed is a failure too.
ctest --test-dir "$out/tiers/build" -R skips --output-junit "$out/tiers/skipped.xml" >"$out/tiers/skipped.log" 2>&1
summary 1 "$out/tiers/skipped.xml" gpu_quick 3 --log "$out/tiers/skipped.log"
grep -qF "0 passed, 0 failed, 1 skipped of 1" "$out/summary.md" || fail "all skipped: $(head -1 "$out/summary.md")"
grep -qF "Nothing passed" "$out/summary.md" || fail "all skipped: no 'Nothing passed' line"
ctest --test-dir "$out/tiers/build" -R '^passes$' --output-junit "$out/tiers/passed.xml" >"$out/tiers/passed.log" 2>&1
summary 0 "$out/tiers/passed.xml" host 1 --log "$out/tiers/passed.log"

summary 2 "$out/no_such_file.xml" host 1
grep -qF "cannot read" "$out/summary.err" || fail "missing file: $(cat "$out/summary.err")"
echo "gpu_check.sh arguments and ctest_summary.py: ok"
