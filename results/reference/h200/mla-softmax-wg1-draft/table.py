#!/usr/bin/env python3
"""The table of this folder's runs (README.md): the 64-token tiling (auto), the pipelined draft of
the 32-token tiling and the 32-token tiling as it is, two rounds alternating in one build.

  python3 results/reference/h200/mla-softmax-wg1-draft/table.py > results/reference/h200/mla-softmax-wg1-draft/table.md
"""
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
SIDES = ("t64", "pipe", "t32")


def points(path):
    return {p["id"]: p for p in json.loads(path.read_text())["points"]}


runs = {(side, r): points(HERE / f"{side}-{r}.json") for side in SIDES for r in (1, 2)}
print("<!-- python3 results/reference/h200/mla-softmax-wg1-draft/table.py -->")
print("Median us of each round (1 / 2); the ratios: the two rounds' sums.\n")
print("| point | 64-token | 32-token, softmax on warpgroup 1 (draft) | 32-token | draft / 64 | draft / 32 |")
print("| --- | --- | --- | --- | ---: | ---: |")
for key, p in runs[("t64", 1)].items():
    q = p["parameters"]
    shape = f"{q['batch']} x {q['T'] // 1024}K, h_q {q['heads_q']}, q_len {q.get('q_len', 1)}"
    if any(d[key]["status"] != "ok" for d in runs.values()):
        print(f"| {shape} | failed | | | | |")
        continue
    us = {k: d[key]["timing"]["median_us"] for k, d in runs.items()}
    tot = {s: us[(s, 1)] + us[(s, 2)] for s in SIDES}
    cells = " | ".join(f"{us[(s, 1)]:.1f} / {us[(s, 2)]:.1f}" for s in SIDES)
    print(f"| {shape} | {cells} | {tot['pipe'] / tot['t64']:.3f} | {tot['pipe'] / tot['t32']:.3f} |")
