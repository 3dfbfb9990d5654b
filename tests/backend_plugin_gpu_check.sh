#!/usr/bin/env bash
# ctest gpu.backend_plugin_sweep: the example plugin built by cmake.backend_plugin (its fixture)
# through a real sweep: examples/backend-plugin/sweep.json (contiguous and paged, FP16, MHA and GQA,
# head dims 64, 96 and 128, ragged lengths, automatic and fixed split counts). Every point is ok,
# verified against the float64 reference, timed, and records the plugin's name, version and plan.
# Usage: backend_plugin_gpu_check.sh SOURCE_DIR OUT_DIR (OUT_DIR: cmake.backend_plugin's)
# Exits 77 (skipped) where there is no GPU.
set -uo pipefail
src=$1 out=$2
fail() { echo "FAIL: $*"; exit 1; }
exe=$out/prefix/bin/decode-bench lib=$out/example/libexample_split_k.so
[ -x "$exe" ] && [ -f "$lib" ] || fail "no $exe or $lib: run ctest -R cmake.backend_plugin first (its fixture)"
results=$out/sweep.json
rm -f "$results"
log=$("$exe" sweep --backend-lib "$lib" --preset "$src/examples/backend-plugin/sweep.json" --output "$results" \
      --repetitions 3 --no-counters 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "no CUDA device found" <<<"$log"; then
  echo "SKIPPED: $(grep -m1 "no CUDA device found" <<<"$log")"
  exit 77
fi
[ $rc -eq 0 ] || fail "sweep exit $rc: $log"
python3 - "$results" <<'PY' || fail "results check"
import json, sys
points = json.load(open(sys.argv[1]))["points"]
plugin = [p for p in points if p["parameters"].get("backend") == "example_split_k"]
assert len(plugin) == 20, f"{len(plugin)} example_split_k points, expected 16 + 4"
layouts = set()
for p in points:
    assert p["status"] == "ok", f'{p["id"]}: {p["status"]} {p.get("reason")}'
    assert p["verification"]["passed"] is True, p["id"]
    assert p["timing"]["median_us"] > 0, p["id"]
for p in plugin:
    assert p["backend"]["name"] == "example_split_k" and p["backend"]["version"] == "1.0.0", p["backend"]
    assert p["plan"]["family"] == "example_split_k", p["plan"]
    if p["parameters"].get("blocks") == 7:
        assert p["plan"]["splits"] == 7, p["plan"]
    layouts.add(p["parameters"]["layout"])
assert layouts == {"contiguous", "paged"}, layouts
print(f"{len(points)} points ok and verified, {len(plugin)} of them example_split_k")
PY
