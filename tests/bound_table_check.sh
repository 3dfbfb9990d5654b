#!/usr/bin/env bash
# ctest: scripts/bound_table.py on a synthetic results file: a memory-bound point (bytes / read
# ceiling), a compute-bound one (FLOPs / tensor roof), the experiment and kernel filters, an
# untimed point left out; a file without ceilings and a missing file are refused by name; with a
# read floor (in the file or --floor-from another) the floor-bound columns, interpolated.
# Usage: bound_table_check.sh SOURCE_DIR OUT_DIR
set -uo pipefail
src=$1 out=$2
source "$src/tests/script_check_lib.sh"
rm -rf "$out" && mkdir -p "$out"
cat >"$out/r.json" <<'JSON'
{"ceilings": {"dram_read": {"value": 2000.0}, "fp16_tensor": {"value": 100.0}},
 "points": [
  {"id": "mem", "experiment": "e", "parameters": {"kernel": "k"}, "timing": {"median_us": 15.0},
   "model": {"bytes": 20000000, "flops": 1000}},
  {"id": "flops", "experiment": "e", "parameters": {"kernel": "k"}, "timing": {"median_us": 30.0},
   "model": {"bytes": 1000, "flops": 2000000000}},
  {"id": "other-kernel", "experiment": "e", "parameters": {"kernel": "z"}, "timing": {"median_us": 1.0},
   "model": {"bytes": 1, "flops": 1}},
  {"id": "untimed", "experiment": "e", "parameters": {"kernel": "k"}, "timing": null,
   "model": {"bytes": 1, "flops": 1}}]}
JSON
got=$(python3 "$src/scripts/bound_table.py" "$out/r.json" --experiment e --kernel k) || fail "exit status $?"
echo "$got"
# 20 MB at 2000 GB/s: 10 us, 1.50; 2 GFLOP at 100 TFLOP/s: 20 us, 1.50.
grep -qx '| mem | 15.0 | 10.0 | 1.50 |' <<<"$got" || fail "memory-bound point"
grep -qx '| flops | 30.0 | 20.0 | 1.50 |' <<<"$got" || fail "compute-bound point"
grep -q 'other-kernel\|untimed' <<<"$got" && fail "a filtered or untimed point was listed"
echo '{"points": []}' > "$out/bare.json"
expect_refused "$out/bare.txt" "has no measured ceilings" "a file without ceilings" -- \
  python3 "$src/scripts/bound_table.py" "$out/bare.json"
expect_refused "$out/missing.txt" "cannot read" "a missing file" -- python3 "$src/scripts/bound_table.py" "$out/missing.json"
# The same points against a read floor of 5 us at 1 MB and 20 us at 30 MB: 20 MB interpolates to
# 14.83 us (time / floor bound 1.01); 1000 bytes extrapolates to 4.48 us, under the 20 us of FLOPs.
python3 - "$out/r.json" "$out/floor.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["ceilings"]["dram_read"]["floor"] = {"mode": "cold", "statistic": "median_us",
                                         "samples": [{"bytes": 30000000, "median_us": 20.0}, {"bytes": 1000000, "median_us": 5.0}]}
json.dump(doc, open(sys.argv[2], "w"))
PY
got=$(python3 "$src/scripts/bound_table.py" "$out/floor.json" --experiment e --kernel k) || fail "floor: exit status $?"
echo "$got"
grep -qx '| mem | 15.0 | 10.0 | 1.50 | 14.8 | 1.01 |' <<<"$got" || fail "memory-bound point against the floor"
grep -qx '| flops | 30.0 | 20.0 | 1.50 | 20.0 | 1.50 |' <<<"$got" || fail "compute-bound point against the floor"
got=$(python3 "$src/scripts/bound_table.py" "$out/r.json" --experiment e --kernel k --floor-from "$out/floor.json") || fail "--floor-from: exit status $?"
grep -qx '| mem | 15.0 | 10.0 | 1.50 | 14.8 | 1.01 |' <<<"$got" || fail "--floor-from does not take the other file's floor"
expect_refused "$out/nofloor.txt" "has no ceilings.dram_read.floor" "--floor-from a file without a floor" -- \
  python3 "$src/scripts/bound_table.py" "$out/r.json" --floor-from "$out/r.json"
echo "bound_table: ok"
