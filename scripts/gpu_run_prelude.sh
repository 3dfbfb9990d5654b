# The common start of a study's run script (results/reference/<gpu>/<study>/run.sh), sourced from
# the repository root on a GPU machine with the tree copied there:
#   C=<commit> F=results/reference/<gpu>/<study> source scripts/gpu_run_prelude.sh
# It writes STAMP (default C) to .decode-bench-commit (the tree travels without .git, so the
# results still name their build), the GPU's name, driver, memory and clocks to F/gpu.txt, unpacks
# FlashInfer's headers from the flashinfer-python wheel carried in .deps/fi into /tmp/fi, configures
# build/ with them (Release, CUDA_ARCH or 90, sm_90a code) and builds everything within 300 s; a
# failed build prints its last lines and exits the script. It defines save, which packs F into
# $OUT/r.tgz when OUT is set (the files then come back even if a later step runs out of time).
: "${C:?set C, the commit}" "${F:?set F, the result folder}"
save() { [ -n "${OUT:-}" ] && tar czf "$OUT/r.tgz" "$F"; }
mkdir -p "$F"
# A second line names changes on top of C (a patch under study); cmake/GitVersion.cmake marks the
# build dirty only where that line says so, so it must.
case "${STAMP:-$C}" in
  *$'\n'*) [[ "${STAMP#*$'\n'}" == *dirty* ]] ||
      { echo "gpu_run_prelude: STAMP's second line must say dirty (cmake/GitVersion.cmake)"; exit 1; } ;;
esac
echo "${STAMP:-$C}" > .decode-bench-commit
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$F/gpu.txt"
wheel=$(ls .deps/fi/flashinfer_python-*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || { echo "gpu_run_prelude: no flashinfer-python wheel in .deps/fi"; exit 1; }
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" /tmp/fi
FLASHINFER_ROOT=/tmp/fi cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DDECODE_BENCH_PTX_ONLY=OFF > /tmp/configure.log 2>&1 ||
  { tail -40 /tmp/configure.log; exit 1; }
prelude_start=$SECONDS
timeout 300 cmake --build build -j"$(nproc)" > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log; exit 1; }
echo "build: $((SECONDS - prelude_start)) s"
