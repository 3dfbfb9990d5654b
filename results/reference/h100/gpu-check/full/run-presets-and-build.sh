#!/usr/bin/env bash
# Build, then the six presets at the stamped commit (one file each, packed after each).
set -uo pipefail
cp .devrun/commit .decode-bench-commit
mkdir -p /tmp/fi && { [ -d /tmp/fi/flashinfer ] || tar xJf .devrun/fi.txz -C /tmp/fi; } && export FLASHINFER_ROOT=/tmp/fi
t0=$SECONDS; el() { echo "[$((SECONDS-t0)) s] $*"; }
R=/tmp/r3; rm -rf $R; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r3.tgz r3); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF > $R/configure.log 2>&1
cmake --build build -j16 > $R/build.log 2>&1 || { el "BUILD FAILED"; grep -B2 -A12 "error" $R/build.log | head -60; pack; exit 1; }
el built
for n in models peer h100 quick variants serving; do
  [ $((SECONDS-t0)) -lt 560 ] || break
  build/sweeps/decode-bench sweep --preset $n --output $R/$n.json > $R/$n.log 2>&1; el "$n rc=$?"; tail -2 $R/$n.log
  pack
done
el done
