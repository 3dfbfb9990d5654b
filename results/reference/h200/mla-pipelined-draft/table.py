#!/usr/bin/env python3
"""The table of one A/B folder of the MLA 32-token tiling's drafts (its README.md): the 64-token
tiling (auto), a draft of the 32-token tiling and the 32-token tiling as it is, two rounds
alternating in one build (t64-1.json, pipe-1.json, t32-1.json, ... in the folder).

  python3 results/reference/h200/mla-pipelined-draft/table.py [FOLDER [LABEL]] > FOLDER/table.md

FOLDER: the folder of the runs (default: this script's); LABEL: the draft's column.
Used by this folder and by ../mla-pipelined-third/, ../mla-s-ahead-draft/, ../mla-softmax-wg1-draft/.
"""
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
SIDES = ("t64", "pipe", "t32")
folder = pathlib.Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else HERE
label = sys.argv[2] if len(sys.argv) > 2 else "32-token pipelined (draft)"


def points(path):
    return {p["id"]: p for p in json.loads(path.read_text())["points"]}


runs = {(side, r): points(folder / f"{side}-{r}.json") for side in SIDES for r in (1, 2)}
args = "".join(f" {a}" if " " not in a else f" '{a}'" for a in sys.argv[1:])
print(f"<!-- python3 results/reference/h200/mla-pipelined-draft/table.py{args} -->")
print("Median us of each round (1 / 2); the ratios: the two rounds' sums.\n")
print(f"| point | 64-token | {label} | 32-token | draft / 64 | draft / 32 |")
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
