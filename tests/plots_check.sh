#!/usr/bin/env bash
# ctest: the plotting scripts on the SYNTHETIC fixtures. Usage: plots_check.sh SOURCE_DIR OUT_DIR [DECODE_BENCH]
#   every expected figure exists as non-empty PNG and SVG, the report is written, and a malformed
#   file exits 2 naming the bad field; no figure has overlapping labels (also with FP32 and FP16
#   roofs 4% apart), every axis label has a unit, legends are in numeric order, every figure has a
#   caption with the device. With DECODE_BENCH, the same through `decode-bench plot`, plus
#   `plot A B --compare` (ratio by experiment, two-device roofline).
set -euo pipefail
src=$1 out=$2 exe=${3:-}
python=""
for p in "${DECODE_BENCH_PYTHON:-}" /usr/bin/python3 python3; do
  if [ -n "$p" ] && "$p" -c 'import matplotlib' >/dev/null 2>&1; then python=$p; break; fi
done
[ -n "$python" ] || { echo "no python3 with matplotlib (install python3-matplotlib)"; exit 1; }
rm -rf "$out"
data=$src/tests/data
if [ -n "$exe" ]; then
  "$exe" plot "$data/synthetic_paper_results.json" "$data/synthetic_capacity_results.json" --out "$out"
else
  "$python" "$src/plots/plot_results.py" "$data/synthetic_paper_results.json" "$data/synthetic_capacity_results.json" --out "$out"
fi
expected="roofline_all roofline_fig1_blocks roofline_fig3_kernels roofline_fig4_e2e roofline_fig6_page_size
  fig1_latency_vs_T fig2_peak_throughput_per_blocks fig3_kernel_throughput_vs_T fig4_end_to_end_throughput_vs_T
  fig5_capacity_vs_max_seq_len fig6_page_size_sweep paged_over_contiguous_vs_page_size measured_over_model_bytes
  roofline_shared_prefix shared_prefix_speedup_vs_prefix_len shared_prefix_roofline"
for fig in $expected; do
  for ext in png svg; do
    [ -s "$out/$fig.$ext" ] || { echo "missing or empty: $out/$fig.$ext"; exit 1; }
  done
done
[ -s "$out/report.md" ] || { echo "missing report.md"; exit 1; }
grep -q "Synthetic test data" "$out/report.md" || { echo "report does not flag synthetic data"; exit 1; }
# The shared-prefix table pairs each shared_prefix point with its batch_decode point: the toy
# fixture's N = 256, P = 32768 pair has a closed-form speedup (batch decode at 3x DRAM over the
# logical bytes: 22996 us; shared_prefix at 1.3x its 536.9 us memory bound: 697.9 us), so the row
# must show 32.95x.
grep -q "^| shared_prefix | 256 | 32768 | 128 | yes | 697.9 | 22996.0 | 32.95x | 536.9 | 1.30 |" "$out/report.md" || { echo "report lacks the shared-prefix table"; exit 1; }

# Malformed input: exit 2 and a message naming the field.
set +e
if [ -n "$exe" ]; then msg=$("$exe" plot "$data/malformed_results.json" --out "$out/bad" 2>&1); else
  msg=$("$python" "$src/plots/plot_results.py" "$data/malformed_results.json" --out "$out/bad" 2>&1); fi
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "malformed file: expected exit 2, got $rc: $msg"; exit 1; }
grep -q "points\[0\].timing.median_us: must be a number" <<<"$msg" || { echo "unclear message: $msg"; exit 1; }
# A file with only capacity points: paper figures are skipped with a note, not an error.
if [ -z "$exe" ]; then
  log=$("$python" "$src/plots/plot_results.py" "$data/synthetic_capacity_results.json" --out "$out/capacity_only")
  grep -q "skipped fig1_latency_vs_T" <<<"$log" || { echo "capacity-only file: expected a skip note: $log"; exit 1; }
fi

# Figures that read well: no overlapping labels, a unit on every axis, legends in numeric order,
# a caption naming the device (plot_results.py records each figure's description in figures.json).
check_descriptions() {  # check_descriptions FIGURES_JSON
  "$python" - "$1" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))["descriptions"]
bad = []
for name, desc in d.items():
    if desc["overlapping_labels"]:
        bad.append(f"{name}: overlapping labels {desc['overlapping_labels']}")
    for ax in desc["axes"]:
        for which in ("xlabel", "ylabel"):
            if not re.search(r"\([^)]+\)", ax[which]):
                bad.append(f"{name}: {which} '{ax[which]}' has no unit in parentheses")
    if "Synthetic GPU" not in desc["caption"]:
        bad.append(f"{name}: caption '{desc['caption']}' does not name the device")
legend = d.get("fig1_latency_vs_T", {"axes": [{"legend": []}]})["axes"][0]["legend"]
if legend and legend != ["16 blocks", "64 blocks", "128 blocks", "256 blocks", "1024 blocks"]:
    bad.append(f"fig1_latency_vs_T: legend not in numeric order: {legend}")
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
}
check_descriptions "$out/figures.json" || { echo "figure descriptions failed ($out/figures.json)"; exit 1; }
# FP32 and FP16 FMA roofs 4% apart: their labels must not print on top of each other.
"$python" - "$data/synthetic_paper_results.json" "$out/close_roofs.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["ceilings"]["fp16_fma"]["value"] = d["ceilings"]["fp32_fma"]["value"] * 1.04
json.dump(d, open(sys.argv[2], "w"))
PY
"$python" "$src/plots/plot_results.py" "$out/close_roofs.json" --out "$out/close_roofs" >/dev/null
check_descriptions "$out/close_roofs/figures.json" || { echo "close roofs: labels overlap"; exit 1; }

# Provenance in the report: build, GPU clocks and temperature at start and end.
"$python" "$src/plots/plot_results.py" "$data/gate_baseline.json" --out "$out/provenance" >/dev/null
grep -q "^- GPU at end: SM 1500 MHz, memory 2600 MHz, 55 C" "$out/provenance/report.md" ||
  { echo "report lacks the GPU state: $(grep -- '- ' "$out/provenance/report.md" | head)"; exit 1; }
grep -q "^- build: Release, CUDA architectures 90" "$out/provenance/report.md" || { echo "report lacks the build"; exit 1; }

# Two runs compared (through decode-bench, which computes the statistics): the ratio figure and
# the two-device roofline, described like the others.
if [ -n "$exe" ]; then
  "$exe" plot "$data/gate_baseline.json" "$data/gate_regressed.json" --compare --out "$out/compare"
  for fig in compare_ratio_by_experiment roofline_compare; do
    for ext in png svg; do
      [ -s "$out/compare/$fig.$ext" ] || { echo "missing or empty: $out/compare/$fig.$ext"; exit 1; }
    done
  done
  [ -s "$out/compare/compare.md" ] || { echo "plot --compare wrote no compare.md"; exit 1; }
  check_descriptions "$out/compare/figures.json" || { echo "compare figures: descriptions failed"; exit 1; }
  set +e
  msg=$("$exe" plot "$data/gate_baseline.json" --compare --out "$out/compare_bad" 2>&1)
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || { echo "plot --compare with one file: expected exit 2, got $rc: $msg"; exit 1; }
  grep -q "exactly two results files" <<<"$msg" || { echo "plot --compare with one file: unclear message: $msg"; exit 1; }
  # Several runs a side, joined by commas: the report counts them, the figures draw the first.
  "$exe" plot "$data/gate_baseline.json,$data/gate_noise.json" "$data/gate_regressed.json,$data/gate_regressed.json" \
    --compare --out "$out/compare_runs"
  [ -s "$out/compare_runs/roofline_compare.png" ] || { echo "plot --compare of runs: no roofline_compare.png"; exit 1; }
  grep -q "A: 2 runs on " "$out/compare_runs/compare.md" || { echo "plot --compare of runs: compare.md lacks the runs"; exit 1; }
fi
echo "plots ok: $out"
