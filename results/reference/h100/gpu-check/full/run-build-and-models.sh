#!/usr/bin/env bash
# Build at the stamped commit; gpt-oss's full-attention layers, sinks on and off: the rule (auto:
# BF16 d 64 on the warpgroup-MMA kernel, about two blocks an SM) against one block an SM (sms)
# and mma.sync (narrow); then the models preset.
set -uo pipefail
cp .devrun/commit .decode-bench-commit
mkdir -p /tmp/fi && { [ -d /tmp/fi/flashinfer ] || tar xJf .devrun/fi.txz -C /tmp/fi; } && export FLASHINFER_ROOT=/tmp/fi
t0=$SECONDS; el() { echo "[$((SECONDS-t0)) s] $*"; }
R=/tmp/m3; rm -rf $R; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/m3.tgz m3); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF > $R/configure.log 2>&1
cmake --build build -j16 > $R/build.log 2>&1 || { el "BUILD FAILED"; grep -B2 -A12 "error" $R/build.log | head -60; pack; exit 1; }
el built
summ() { python3 - $1 <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
for p in d['points']:
  if not p.get('timing'): print('  untimed', p['id'], p.get('status'), p.get('reason','')); continue
  pl=p['plan']; pr=p['parameters']
  m='C' if pl.get('cluster_merge') else ('S' if pl.get('dependent_merge') else 'F')
  print('  %s %s %4dx%-5d %-10s sp%-3s %s %8.2f us  floor %.3f  err %.1e' % ('sinks' if pr['sinks'] else 'plain', pr['layout'][:4], pr['batch'], pr['T'], pl.get('family'), pl.get('num_splits'), m, p['timing']['median_us'], p['achieved'].get('fraction_of_read_floor',0), p['verification'].get('max_rel_error',-1)))
PY
}
S="build/sweeps/decode-bench sweep --no-counters --preset models --experiment gpt_oss_full --set sinks=true,false --filter T=(32768|4096)"
for round in 1 2; do
  for c in auto:auto auto:sms narrow:auto; do
    t=${c%:*}; sp=${c#*:}
    [ $round = 2 ] && [ $t = narrow ] && continue
    DECODE_BENCH_ROW_TILING=$t DECODE_BENCH_ROW_DECODE_SPLITS=$sp timeout 40 $S --output $R/oss-$t-$sp-$round.json > $R/oss-$t-$sp-$round.log 2>&1; el "oss tiling $t splits $sp round $round rc=$?"; summ $R/oss-$t-$sp-$round.json
  done
done
pack
build/sweeps/decode-bench sweep --preset models --output $R/models.json > $R/models.log 2>&1; el "models rc=$?"; tail -2 $R/models.log
pack
el done
