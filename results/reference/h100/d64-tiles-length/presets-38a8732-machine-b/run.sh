#!/usr/bin/env bash
# The presets at the stamped commit (builds if the machine is fresh).
set -uo pipefail
cp .devrun/commit .decode-bench-commit
mkdir -p /tmp/fi && tar xJf .devrun/fi.txz -C /tmp/fi && export FLASHINFER_ROOT=/tmp/fi
t0=$SECONDS; el() { echo "[$((SECONDS-t0)) s] $*"; }
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF -DDECODE_BENCH_BUILD_TESTS=ON > /tmp/configure.log 2>&1
cmake --build build -j16 --target decode-bench > /tmp/build.log 2>&1 || { el "BUILD FAILED"; tail -30 /tmp/build.log; exit 1; }
el built
R=/tmp/r49; rm -rf $R; mkdir -p $R
for n in ${PRESETS:-models h100 peer quick}; do
  timeout 150 build/sweeps/decode-bench sweep --preset $n --output $R/$n.json > $R/$n.log 2>&1; el "$n rc=$?"; tail -1 $R/$n.log
  (cd /tmp && tar czf $OUT/r49.tgz r49)
done
el done
