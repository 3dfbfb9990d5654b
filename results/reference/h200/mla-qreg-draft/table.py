#!/usr/bin/env python3
"""The table of this folder's runs (README.md): the 64-token tiling (main's kernel) against the draft
with Q in registers (MLA_QREG_DRAFT=1), two rounds alternating in one build, with each side's
fraction of the BF16 wgmma roof the run measured (round 1).

  python3 results/reference/h200/mla-qreg-draft/table.py > results/reference/h200/mla-qreg-draft/table.md
"""
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
SIDES = ("t64", "qreg")


def points(path):
    return {p["id"]: p for p in json.loads(path.read_text())["points"]} if path.exists() else {}


runs = {(side, r): points(HERE / f"{side}-{r}.json") for side in SIDES for r in (1, 2)}
print("<!-- python3 results/reference/h200/mla-qreg-draft/table.py -->")
print("Median us of each round (1 / 2); the ratio: the rounds' sums; roof: fraction of the tensor roof.\n")
print("| point | 64-token (main) | Q in registers (draft) | draft / 64 | roof 64 | roof draft |")
print("| --- | --- | --- | ---: | ---: | ---: |")
for key, p in runs[("t64", 1)].items():
    q = p["parameters"]
    shape = f"{q['batch']} x {q['T'] // 1024}K, h_q {q['heads_q']}, q_len {q.get('q_len', 1)}"
    sides = {k: d.get(key) for k, d in runs.items() if d}
    if any(v is None or v["status"] != "ok" for v in sides.values()):
        status = ", ".join(f"{k[0]}-{k[1]} {v['status'] if v else 'missing'}" for k, v in sides.items())
        print(f"| {shape} | {status} | | | | |")
        continue
    us = {k: v["timing"]["median_us"] for k, v in sides.items()}
    rounds = sorted({r for (_, r) in us})
    tot = {s: sum(us[(s, r)] for r in rounds) for s in SIDES}
    cells = " | ".join(" / ".join(f"{us[(s, r)]:.1f}" for r in rounds) for s in SIDES)
    roof = [sides[(s, 1)]["achieved"].get("fraction_of_tensor_roof", float("nan")) for s in SIDES]
    print(f"| {shape} | {cells} | {tot['qreg'] / tot['t64']:.3f} | {roof[0]:.3f} | {roof[1]:.3f} |")
