#!/usr/bin/env python3
"""The table of this folder's runs (README.md): the staged epilogue (main) against the direct stores
(MLA_DIRECT_EPILOGUE_DRAFT=1), two rounds alternating in one build, with each point's splits and
tiles a split from the plan and its blocks (sequences x row blocks x splits).

  python3 results/reference/h200/mla-epilogue-few-tiles/table.py > results/reference/h200/mla-epilogue-few-tiles/table.md
"""
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
SIDES = ("staged", "direct")


def points(path):
    return {p["id"]: p for p in json.loads(path.read_text())["points"]}


runs = {(side, r): points(HERE / f"{side}-{r}.json") for side in SIDES for r in (1, 2)}
print("<!-- python3 results/reference/h200/mla-epilogue-few-tiles/table.py -->")
print("Median us of each round (1 / 2); the ratio: the two rounds' sums.\n")
print("| point | splits | tiles a split | blocks | staged (main) | direct | direct / staged |")
print("| --- | --: | --: | --: | --- | --- | ---: |")
for key, p in runs[("staged", 1)].items():
    q = p["parameters"]
    shape = f"{q['batch']} x {q['T'] // 1024}K, h_q {q['heads_q']}, q_len {q.get('q_len', 1)}"
    if any(d[key]["status"] != "ok" for d in runs.values()):
        print(f"| {shape} | | | | failed | | |")
        continue
    plan = p["plan"]
    us = {k: d[key]["timing"]["median_us"] for k, d in runs.items()}
    tot = {s: us[(s, 1)] + us[(s, 2)] for s in SIDES}
    cells = " | ".join(f"{us[(s, 1)]:.2f} / {us[(s, 2)]:.2f}" for s in SIDES)
    blocks = q["batch"] * plan["row_blocks"] * plan["num_splits"]
    print(f"| {shape} | {plan['num_splits']} | {plan['split_tiles']} | {blocks} | {cells} | {tot['direct'] / tot['staged']:.3f} |")
