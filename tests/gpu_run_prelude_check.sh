#!/usr/bin/env bash
# ctest: what scripts/gpu_run_prelude.sh decides before it builds anything, in an empty directory
# (no FlashInfer wheel there, so an accepted stamp ends at the wheel's check).
# Usage: gpu_run_prelude_check.sh SOURCE_DIR OUT_DIR
#   a STAMP whose second line does not say dirty is refused (exit 1, the message names the rule),
#   before .decode-bench-commit is written; a second line that says it is written as given; no
#   STAMP writes C alone.
set -uo pipefail
src=$1 out=$2
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

prelude() {  # prelude DIR [STAMP]: source the prelude with C=abc1234 F=f in DIR; prints its output
  local dir=$1
  mkdir -p "$dir"
  (cd "$dir" && if [ $# -gt 1 ]; then export STAMP=$2; fi &&
    C=abc1234 F=f bash -c "source '$src/scripts/gpu_run_prelude.sh'" 2>&1)
}

output=$(prelude "$out/patch-named" $'abc1234\nwith x.patch applied')
rc=$?
[ $rc -eq 1 ] || fail "a second line without dirty: expected exit 1, got $rc: $output"
grep -qF "second line must say dirty" <<<"$output" || fail "the refusal does not name the rule: $output"
[ ! -e "$out/patch-named/.decode-bench-commit" ] || fail "the refused stamp was written"

output=$(prelude "$out/dirty" $'abc1234\ndirty: x.patch applied')
[ "$(cat "$out/dirty/.decode-bench-commit")" = $'abc1234\ndirty: x.patch applied' ] ||
  fail "a dirty stamp was not written as given: $(cat "$out/dirty/.decode-bench-commit" 2>&1)"
grep -qF "no flashinfer-python wheel" <<<"$output" || fail "the dirty stamp did not reach the wheel's check: $output"

output=$(prelude "$out/plain")
[ "$(cat "$out/plain/.decode-bench-commit")" = "abc1234" ] ||
  fail "no STAMP: expected the commit alone: $(cat "$out/plain/.decode-bench-commit" 2>&1)"
echo "gpu_run_prelude_check: ok"
