#!/usr/bin/env bash
# ctest: scripts/mla_table.py on a synthetic results file: one shape with decode-bench and a peer
# (the peer's time over decode-bench's), a point left of the ridge and one right of it (ridge =
# the wgmma roof over the DRAM read ceiling), a non-MLA point and a skipped one left out; a file
# without ceilings and a missing file are refused by name.
# Usage: mla_table_check.sh SOURCE_DIR OUT_DIR
set -uo pipefail
src=$1 out=$2
source "$src/tests/script_check_lib.sh"
rm -rf "$out" && mkdir -p "$out"
# Ridge: 1000 TFLOP/s over 2000 GB/s = 500 FLOP a byte.
cat >"$out/r.json" <<'JSON'
{"ceilings": {"dram_read": {"value": 2000.0}, "bf16_tensor_wgmma": {"value": 1000.0}},
 "points": [
  {"parameters": {"attention": "mla", "backend": "decode-bench", "batch": 128, "T": 4096, "heads_q": 16, "q_len": 1},
   "timing": {"median_us": 200.0}, "plan": {"kernel": "mla_decode_wgmma"},
   "achieved": {"fraction_of_dram_read": 0.95, "fraction_of_tensor_roof": 0.1, "tensor_roof": "bf16_tensor_wgmma"},
   "model": {"arithmetic_intensity": 56.0}},
  {"parameters": {"attention": "mla", "backend": "peer", "batch": 128, "T": 4096, "heads_q": 16, "q_len": 1},
   "timing": {"median_us": 300.0}, "plan": {}, "achieved": {}, "model": {}},
  {"parameters": {"attention": "mla", "backend": "decode-bench", "batch": 32, "T": 1000, "heads_q": 128, "q_len": 4},
   "timing": {"median_us": 50.0}, "plan": {"kernel": "mla_decode_mma_narrow"},
   "achieved": {"fraction_of_dram_read": 0.2, "fraction_of_tensor_roof": 0.6, "tensor_roof": "bf16_tensor_wgmma"},
   "model": {"arithmetic_intensity": 864.0}},
  {"parameters": {"attention": "mha", "backend": "decode-bench", "batch": 1, "T": 8, "heads_q": 8, "q_len": 1},
   "timing": {"median_us": 1.0}, "plan": {}, "achieved": {}, "model": {}},
  {"status": "skipped", "parameters": {"attention": "mla", "backend": "decode-bench", "batch": 2, "T": 8, "heads_q": 8, "q_len": 1}}]}
JSON
got=$(python3 "$src/scripts/mla_table.py" "$out/r.json") || fail "exit status $?"
echo "$got"
grep -qx '| shape | h_q x q_len | kernel | us | of DRAM read | of wgmma roof | side | peer us | peer / decode-bench |' <<<"$got" || fail "header"
grep -qx '| 128 x 4K | 16 x 1 | wgmma | 200.0 | 0.950 | 0.100 | memory | 300.0 | 1.50 |' <<<"$got" || fail "memory-side row"
grep -qx '| 32 x 1000 | 128 x 4 | mma_narrow | 50.0 | 0.200 | 0.600 | compute | - | - |' <<<"$got" || fail "compute-side row without a peer"
[ "$(grep -c '^| [0-9]' <<<"$got")" = 2 ] || fail "a non-MLA or skipped point was listed"
echo '{"points": []}' > "$out/bare.json"
expect_refused "$out/bare.txt" "no ceilings.dram_read.value" "a file without ceilings" -- \
  python3 "$src/scripts/mla_table.py" "$out/bare.json"
expect_refused "$out/missing.txt" "cannot read" "a missing file" -- python3 "$src/scripts/mla_table.py" "$out/missing.json"
echo "mla_table_check: ok"
