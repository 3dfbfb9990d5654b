#!/usr/bin/env bash
# ctest: cmake/FlashInfer.cmake's ways to FlashInfer's headers and its refusals, on a throw-away
# project that includes only that module. Nothing is downloaded: pip is pointed at a closed port on
# this machine, as on a machine without network.
# Usage: flashinfer_cmake_check.sh SOURCE_DIR OUT_DIR [UNPACKED_WHEEL]
#   no network, no package -> configure succeeds, the backend is not built, the message says why;
#   the same with DECODE_BENCH_FLASHINFER=ON -> configure fails; a wheel in the build tree whose
#   sha256 is not the pin -> refused and removed; FLASHINFER_ROOT that holds no headers -> configure
#   fails naming it; FLASHINFER_ROOT at an unpacked wheel (the main build's, UNPACKED_WHEEL), at its
#   package folder or its data folder -> found, with the wheel's version and its CUTLASS headers (the
#   Hopper MLA kernel's); headers and CCCL without CUTLASS -> found, CUTLASS not, saying why; a bad
#   option value -> fails.
# Exit 77 (skipped) when python3 finds an installed flashinfer package: it would be found first.
set -uo pipefail
src=$1 out=$2 wheel=${3:-}
rm -rf "$out"
mkdir -p "$out/tree"
cat >"$out/tree/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(flashinfer_probe LANGUAGES NONE)
list(APPEND CMAKE_MODULE_PATH "$src/cmake")
include(FlashInfer)
message(STATUS "probe: found=\${DECODE_BENCH_FLASHINFER_FOUND} version=\${DECODE_BENCH_FLASHINFER_VERSION}")
message(STATUS "probe: cutlass=\${DECODE_BENCH_FLASHINFER_CUTLASS_FOUND} why=\${DECODE_BENCH_FLASHINFER_CUTLASS_REASON}")
CM
fail() { echo "FAIL: $*"; exit 1; }
if python3 -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("flashinfer") is None)' 2>/dev/null; then
  echo "SKIPPED: an installed flashinfer python package is found before the download path"
  exit 77
fi
# pip: no configuration file or local wheel folder, an index on a closed port of this machine
# (connection refused at once).
export PIP_CONFIG_FILE=/dev/null PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_NO_CACHE_DIR=1
unset FLASHINFER_ROOT PIP_FIND_LINKS
configure() {  # configure NAME [cmake args...]: its output in $out/NAME.log, its status returned
  local name=$1
  shift
  cmake -S "$out/tree" -B "$out/$name" "$@" >"$out/$name.log" 2>&1
}
# cmake wraps and indents the lines of an error message: the output is matched with every run of
# white space made one space.
has() {
  tr -s '[:space:]' ' ' <"$out/$1.log" >"$out/$1.flat"
  grep -qF -- "$2" "$out/$1.flat" || fail "$1: no '$2' in its output: $(cat "$out/$1.log")"
}

configure offline || fail "offline: configure failed: $(cat "$out/offline.log")"
has offline "FlashInfer: backend flashinfer not built: pip download flashinfer-python==0.6.18.post1 failed"
has offline "probe: found=OFF version="

configure offline_on -DDECODE_BENCH_FLASHINFER=ON && fail "offline_on: configure succeeded"
has offline_on "DECODE_BENCH_FLASHINFER=ON but FlashInfer's headers cannot be had: pip download flashinfer-python==0.6.18.post1 failed"

configure off -DDECODE_BENCH_FLASHINFER=OFF || fail "off: configure failed"
has off "backend flashinfer not built: DECODE_BENCH_FLASHINFER=OFF"

configure bad_option -DDECODE_BENCH_FLASHINFER=maybe && fail "bad_option: configure succeeded"
has bad_option "DECODE_BENCH_FLASHINFER=maybe: expected AUTO, ON or OFF"

# A file where the pinned wheel goes, with other bytes: refused by its sha256 and removed.
mkdir -p "$out/tampered/_deps/flashinfer-wheel"
tampered="$out/tampered/_deps/flashinfer-wheel/flashinfer_python-0.6.18.post1-py3-none-any.whl"
echo "not a wheel" >"$tampered"
configure tampered || fail "tampered: configure failed"
has tampered "not the pinned adb6d2952b47131138e108bd2999b1fe18b71f1a4c0b2684f168753db9563991 (removed)"
[[ ! -e $tampered ]] || fail "tampered: the file is still there"

configure no_headers -DFLASHINFER_ROOT="$out/tree" && fail "no_headers: configure succeeded"
has no_headers "FLASHINFER_ROOT=$out/tree: no flashinfer/data/include/flashinfer/attention/decode.cuh"

if [[ -n $wheel && -d $wheel/flashinfer/data/include ]]; then
  configure root_wheel -DFLASHINFER_ROOT="$wheel" || fail "root_wheel: configure failed: $(cat "$out/root_wheel.log")"
  has root_wheel "FlashInfer 0.6.18.post1: FLASHINFER_ROOT=$wheel; backend flashinfer built"
  FLASHINFER_ROOT="$wheel/flashinfer" configure root_package || fail "root_package: configure failed"
  has root_package "FlashInfer 0.6.18.post1: FLASHINFER_ROOT=$wheel/flashinfer; backend flashinfer built"
  configure root_data -DFLASHINFER_ROOT="$wheel/flashinfer/data" || fail "root_data: configure failed"
  has root_data "probe: found=ON version=0.6.18.post1"
  has root_data "probe: cutlass=ON why="
  # Headers and CCCL without CUTLASS: the backends build, the Hopper MLA kernel does not, and the
  # reason names the folder.
  mkdir -p "$out/no_cutlass"
  ln -s "$wheel/flashinfer/data/include" "$out/no_cutlass/include"
  ln -s "$wheel/flashinfer/data/cccl" "$out/no_cutlass/cccl"
  configure no_cutlass -DFLASHINFER_ROOT="$out/no_cutlass" || fail "no_cutlass: configure failed"
  has no_cutlass "probe: found=ON"
  has no_cutlass "probe: cutlass=OFF why=$out/no_cutlass has no cutlass/include"
  # Headers without the CCCL they need: refused, naming the folder.
  mkdir -p "$out/partial/include"
  cp -r "$wheel/flashinfer/data/include/flashinfer" "$out/partial/include/"
  configure partial -DFLASHINFER_ROOT="$out/partial" && fail "partial: configure succeeded"
  has partial "FLASHINFER_ROOT=$out/partial: $out/partial has FlashInfer's headers but no cccl/libcudacxx/include"
else
  echo "note: no unpacked wheel given, the FLASHINFER_ROOT layouts were not checked"
fi
echo "flashinfer cmake checks passed"
