#!/usr/bin/env bash
# ctest cmake.backend_plugin: a backend plugin built outside the tree (docs/backends.md, "Plugins").
# Usage: backend_plugin_check.sh SOURCE_DIR BUILD_DIR OUT_DIR CUDA_COMPILER CUDA_ARCH FLASHINFER_LICENSE GENERATOR [LAUNCHER]
#   `cmake --install` of this build into OUT_DIR/prefix holds bin/decode-bench, the plugin header
#   and the decode_bench package (and FlashInfer's licence text when FLASHINFER_LICENSE is 1: the
#   build compiles FlashInfer in and found its licence file); examples/backend-plugin configures against it with
#   find_package(decode_bench) and builds libexample_split_k.so (one CUDA architecture); the
#   installed decode-bench loads it with --backend-lib and lists its backend in --list-axes and in
#   a dry run's point ids (no GPU needed). The GPU test gpu.backend_plugin_sweep runs the result.
set -uo pipefail
src=$1 build=$2 out=$3 nvcc=$4 arch=$5 flashinfer_license=$6 generator=$7 launcher=${8:-}
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

prefix=$out/prefix
cmake --install "$build" --prefix "$prefix" >"$out/install.log" 2>&1 || fail "cmake --install: $(cat "$out/install.log")"
for f in bin/decode-bench include/decode_bench/backend.h lib/cmake/decode_bench/decode_benchConfig.cmake \
         lib/cmake/decode_bench/decode_benchConfigVersion.cmake lib/cmake/decode_bench/decode_benchTargets.cmake; do
  [ -e "$prefix/$f" ] || fail "cmake --install did not install $f"
done
licence=$prefix/share/doc/decode_bench/licenses/FlashInfer-LICENSE
if [ "$flashinfer_license" = 1 ]; then
  grep -q "Apache License" "$licence" || fail "the FlashInfer backend is built but $licence is not its licence text"
else
  [ ! -e "$licence" ] || fail "$licence installed by a build without the FlashInfer backend"
fi

example=$out/example
launch=()
[ -n "$launcher" ] && launch=(-DCMAKE_CUDA_COMPILER_LAUNCHER="$launcher" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
cmake -S "$src/examples/backend-plugin" -B "$example" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" \
      "${launch[@]}" >"$out/configure.log" 2>&1 || fail "configuring the example: $(cat "$out/configure.log")"
grep -q "decode_bench_DIR:PATH=$prefix/lib/cmake/decode_bench" "$example/CMakeCache.txt" ||
  fail "the example did not find the installed package: $(grep decode_bench_DIR "$example/CMakeCache.txt")"
cmake --build "$example" >"$out/build.log" 2>&1 || fail "building the example: $(cat "$out/build.log")"
lib=$example/libexample_split_k.so
[ -f "$lib" ] || fail "no $lib"
symbols=$(nm -D --defined-only "$lib") || fail "nm -D $lib"
grep -q " decode_bench_plugin_abi_version$" <<<"$symbols" || fail "$lib does not export decode_bench_plugin_abi_version"
grep -q " decode_bench_plugin_backends$" <<<"$symbols" || fail "$lib does not export decode_bench_plugin_backends"

exe=$prefix/bin/decode-bench
axes=$("$exe" sweep --backend-lib "$lib" --list-axes 2>&1) || fail "--list-axes with the plugin: $axes"
grep -qE "^  backend +one of: decode-bench, flashinfer, flashinfer_tc, flashinfer_mla, flashinfer_mla_fa3, example_split_k;" <<<"$axes" ||
  fail "--list-axes does not list example_split_k: $axes"
dry=$("$exe" sweep --backend-lib "$lib" --preset "$src/examples/backend-plugin/sweep.json" --dry-run 2>&1) ||
  fail "dry run of sweep.json: $dry"
grep -q "heads/kernel=batch_decode/backend=example_split_k/layout=paged/" <<<"$dry" ||
  fail "the dry run has no example_split_k paged point: $dry"
without=$("$exe" sweep --preset "$src/examples/backend-plugin/sweep.json" --dry-run 2>&1)
[ $? -eq 2 ] || fail "sweep.json without --backend-lib: expected exit 2: $without"
grep -qF 'unknown value "example_split_k"' <<<"$without" || fail "no unknown-value message: $without"
echo "PASS: installed, built libexample_split_k.so out of tree, listed and planned with --backend-lib"
