#!/usr/bin/env bash
# ctest: scripts/gpu_pair_split.py on synthetic results of two GPUs (read ceilings 3000 and 4500
# GB/s, r = 2/3): a point built as 10 us + 30 us of streaming on A (10 + 20 on B) splits back into
# 10 and 30; a later B file replaces an earlier one's point (ids compared without a trailing
# /counters=false); a point planned differently and one B did not time are listed, not split; the
# experiment filter; a file without the read ceiling, a B slower than A, B files of two GPUs and a
# missing file are refused by name.
# Usage: gpu_pair_split_check.sh SOURCE_DIR OUT_DIR
set -uo pipefail
src=$1 out=$2
source "$src/tests/script_check_lib.sh"
rm -rf "$out" && mkdir -p "$out"
point() {  # point ID EXPERIMENT MEDIAN_US SPLITS
  printf '{"id": "%s", "experiment": "%s", "timing": {"median_us": %s}, "plan": {"family": "rows_wgmma", "num_splits": %s}}' "$1" "$2" "$3" "$4"
}
cat >"$out/a.json" <<JSON
{"device": {"name": "GPU A"}, "ceilings": {"dram_read": {"value": 3000.0}},
 "points": [$(point split e 40.0 1), $(point replaced e 40.0 1), $(point replanned e 40.0 1), $(point only-a e 40.0 1),
            $(point other f 40.0 1), {"id": "untimed", "experiment": "e", "timing": null}]}
JSON
cat >"$out/b.json" <<JSON
{"device": {"name": "GPU B"}, "ceilings": {"dram_read": {"value": 4500.0}},
 "points": [$(point split e 30.0 1), $(point replaced e 99.0 1), $(point replanned e 30.0 2), $(point other f 30.0 1)]}
JSON
cat >"$out/b2.json" <<JSON
{"device": {"name": "GPU B"}, "ceilings": {"dram_read": {"value": 4510.0}},
 "points": [$(point replaced/counters=false e 34.0 1)]}
JSON
got=$(python3 "$src/scripts/gpu_pair_split.py" "$out/a.json" "$out/b.json" "$out/b2.json" --experiment e) || fail "exit status $?"
echo "$got"
grep -q 'r = A / B = 0.6667' <<<"$got" || fail "the ratio of the read ceilings"
grep -qx '| `split` | 40.00 | 30.00 | 0.750 | 10.00 | 0.250 | 30.00 |' <<<"$got" || fail "10 + 30 us not split back"
# replaced: 40 on A, 34 on B (from b2.json): scaled 6 / (1/3) = 18, unscaled 22.
grep -qx '| `replaced` | 40.00 | 34.00 | 0.850 | 22.00 | 0.550 | 18.00 |' <<<"$got" || fail "a later B file's point"
grep -q '^- `replanned`: plans differ' <<<"$got" || fail "a point planned differently was split"
grep -q '^- `only-a`: not timed in B' <<<"$got" || fail "a point B did not time"
grep -q 'other\|untimed' <<<"$got" && fail "a filtered or untimed point was listed"
echo '{"points": []}' >"$out/bare.json"
expect_refused "$out/bare.txt" "no ceilings.dram_read.value" "a file without the read ceiling" -- \
  python3 "$src/scripts/gpu_pair_split.py" "$out/a.json" "$out/bare.json"
expect_refused "$out/slower.txt" "is not above A's" "a B with the lower ceiling" -- \
  python3 "$src/scripts/gpu_pair_split.py" "$out/b.json" "$out/a.json"
sed 's/4510.0/9000.0/' "$out/b2.json" >"$out/b3.json"
expect_refused "$out/mixed.txt" "more than 1% from the first B file" "B files of two GPUs" -- \
  python3 "$src/scripts/gpu_pair_split.py" "$out/a.json" "$out/b.json" "$out/b3.json"
expect_refused "$out/missing.txt" "cannot read" "a missing file" -- \
  python3 "$src/scripts/gpu_pair_split.py" "$out/a.json" "$out/missing.json"
echo "gpu_pair_split: ok"
