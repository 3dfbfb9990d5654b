#!/usr/bin/env python3
"""Table of this folder's probes (README.md): each run's median us per point, one column a run.

  python3 results/reference/h200/planner-probes-3036147/table.py > results/reference/h200/planner-probes-3036147/table.md
"""
import json
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
GROUPS = {
    "Gemma-3-27B local layers (32 / 16 heads, d 128, BF16, window 1024)": ["local-auto-1", "local-auto-2", "local-b8-1", "local-b8-2", "local-b16-1", "local-b16-2", "local-tc-1", "local-tc-2", "local-tcslots-1", "local-tcslots-2"],
    "Gemma-3-27B global layers": ["global-auto", "global-scale2"],
    "Phi-3-mini (32 / 32 heads, d 96, FP16)": ["phi3-auto", "phi3-short"],
    "1 x 32K grouped decodes (Llama-3-8B, Qwen2.5-7B)": ["g32k-auto", "g32k-steal25", "g32k-steal50", "g32k-off"],
}


def points(name):
    doc = json.loads((HERE / f"{name}.json").read_text())
    # --set blocks=N adds to the id; the same point under another split count is the same row here.
    return {re.sub(r"/blocks=\d+", "", p["id"]): p for p in doc["points"]}


def shape(p):
    q = p["parameters"]
    return f"{p['experiment']} {q['layout']} {q['batch']} x {q['T']}"


print("<!-- python3 results/reference/h200/planner-probes-3036147/table.py -->")
for title, runs in GROUPS.items():
    docs = {r: points(r) for r in runs}
    print(f"\n## {title}\n")
    print("Median us (splits, family) per run.\n")
    print("| point | " + " | ".join(runs) + " |")
    print("| --- |" + " ---: |" * len(runs))
    for key, p in docs[runs[0]].items():
        cells = []
        for r in runs:
            q = docs[r][key]
            cells.append("failed" if q["status"] != "ok" else
                         f"{q['timing']['median_us']:.2f} ({q['plan']['num_splits']}, {q['plan']['family']})")
        print(f"| {shape(p)} | " + " | ".join(cells) + " |")
