#!/usr/bin/env python3
"""The table of an A/B folder of one MLA draft against the 64-token tiling (main's kernel), two
rounds alternating in one build (t64-1.json, DRAFT-1.json, t64-2.json, DRAFT-2.json in the folder),
with each side's fraction of the BF16 wgmma roof the run measured (round 1).

  python3 results/reference/h200/mla-qreg-draft/table.py [FOLDER DRAFT LABEL] > FOLDER/table.md

Default: this folder, its draft with Q in registers (MLA_QREG_DRAFT=1). Used by this folder and by
../mla-seesaw-parts-draft/.
"""
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
folder, draft, label = (pathlib.Path(sys.argv[1]).resolve(), sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else (
    HERE, "qreg", "Q in registers (draft)")
SIDES = ("t64", draft)


def points(path):
    return {p["id"]: p for p in json.loads(path.read_text())["points"]} if path.exists() else {}


runs = {(side, r): points(folder / f"{side}-{r}.json") for side in SIDES for r in (1, 2)}
args = "".join(f" {a}" if " " not in a else f" '{a}'" for a in sys.argv[1:])
print(f"<!-- python3 results/reference/h200/mla-qreg-draft/table.py{args} -->")
print("Median us of each round (1 / 2); the ratio: the rounds' sums; roof: fraction of the tensor roof.\n")
print(f"| point | 64-token (main) | {label} | draft / 64 | roof 64 | roof draft |")
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
    print(f"| {shape} | {cells} | {tot[draft] / tot['t64']:.3f} | {roof[0]:.3f} | {roof[1]:.3f} |")
