#!/usr/bin/env bash
# ctest: cmake/GitVersion.cmake's order of commit sources, on throw-away trees without .git.
# Usage: git_version_check.sh SOURCE_DIR OUT_DIR
#   none -> "unknown"; .decode-bench-commit (sha, "dirty") -> commit_file; the environment beats
#   the file; -DDECODE_BENCH_GIT_SHA beats the environment; the file beats a (stale) git history,
#   with a warning; git alone -> git; a sha that is not hex stops cmake.
set -uo pipefail
src=$1 out=$2
rm -rf "$out"
mkdir -p "$out/tree/cmake" "$out/tree/harness"
cp "$src/cmake/GitVersion.cmake" "$out/tree/cmake/"
cp "$src/harness/build_info.hpp.in" "$out/tree/harness/"
cat >"$out/tree/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(git_version_probe VERSION 1.2.3 LANGUAGES NONE)
include(cmake/GitVersion.cmake)
CM
fail() { echo "FAIL: $*"; exit 1; }
configure() {  # configure NAME [cmake args...]; leaves the generated header in $out/NAME
  local name=$1
  shift
  cmake -S "$out/tree" -B "$out/$name" "$@" >"$out/$name.log" 2>&1
}
header_file() { echo "$out/$1/generated/build_info.hpp"; }  # grep reads the file itself: no pipe to break
expect() {  # expect NAME SHA DIRTY SOURCE
  grep -q "kGitSha = \"$2\"" "$(header_file "$1")" || fail "$1: sha is not $2: $(grep kGitSha "$(header_file "$1")")"
  grep -q "kGitDirty = $3;" "$(header_file "$1")" || fail "$1: dirty is not $3"
  grep -q "kGitSource = \"$4\"" "$(header_file "$1")" || fail "$1: source is not $4"
}
sha=0123456789abcdef0123456789abcdef01234567
other=89abcdef0123456789abcdef0123456789abcdef

unset DECODE_BENCH_GIT_SHA DECODE_BENCH_GIT_DIRTY
configure none || fail "none: cmake failed"
expect none unknown false none

printf '%s\ndirty\n' "$sha" >"$out/tree/.decode-bench-commit"
configure file || fail "file: cmake failed"
expect file "$sha" true commit_file

DECODE_BENCH_GIT_SHA=$other configure env || fail "env: cmake failed"
expect env "$other" false environment

DECODE_BENCH_GIT_SHA=$other configure option -DDECODE_BENCH_GIT_SHA=ABCDEF1 -DDECODE_BENCH_GIT_DIRTY=ON ||
  fail "option: cmake failed"
expect option abcdef1 true cmake_option

# A tree with its own (stale) git history and a stamp: the stamp wins, and configure warns.
if command -v git >/dev/null; then
  git -C "$out/tree" init -q && git -C "$out/tree" -c user.name=t -c user.email=t@t add CMakeLists.txt &&
    git -C "$out/tree" -c user.name=t -c user.email=t@t commit -qm stale || fail "stale: git init failed"
  configure stale || fail "stale: cmake failed"
  expect stale "$sha" true commit_file
  grep -q "names $sha but git HEAD is" <<<"$(tr -s " \n" " " <"$out/stale.log")" || fail "stale: no warning: $(cat "$out/stale.log")"
  rm "$out/tree/.decode-bench-commit"
  configure git || fail "git: cmake failed"
  grep -q "kGitSource = \"git\"" "$(header_file git)" || fail "git: source is not git"
  rm -rf "$out/tree/.git"
  printf '%s\ndirty\n' "$sha" >"$out/tree/.decode-bench-commit"
fi

if DECODE_BENCH_GIT_SHA="not a sha" configure bad; then fail "bad: cmake accepted 'not a sha'"; fi
grep -q "is 'not a sha', not a hex git sha" "$out/bad.log" || fail "bad: unclear message: $(cat "$out/bad.log")"
echo "git version ok: $out"
