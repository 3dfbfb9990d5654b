#!/usr/bin/env python3
"""The table of this folder's runs (README.md): the seesaw draft against the MLA warpgroup-MMA
kernel, two rounds alternating in one build on one H200.

  python3 results/reference/h200/mla-seesaw-draft/table.py > results/reference/h200/mla-seesaw-draft/table.md
"""
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent


def points(path):
    return {p["id"]: p for p in json.loads(path.read_text())["points"]}


runs = {(side, r): points(HERE / f"{side}-{r}.json") for side in ("base", "seesaw") for r in (1, 2)}
print("<!-- python3 results/reference/h200/mla-seesaw-draft/table.py -->")
print("Median us of each round (1 / 2); seesaw / base: the two rounds' sum of the draft over the kernel's.\n")
print("| point | rows | base | seesaw | seesaw / base | seesaw max abs error |")
print("| --- | ---: | --- | --- | ---: | ---: |")
for key, p in runs[("base", 1)].items():
    q = p["parameters"]
    shape = f"{q['batch']} x {q['T'] // 1024}K, h_q {q['heads_q']}, q_len {q.get('q_len', 1)}"
    if any(d[key]["status"] != "ok" for d in runs.values()):
        print(f"| {shape} | | failed | | | |")
        continue
    us = {k: d[key]["timing"]["median_us"] for k, d in runs.items()}
    ratio = (us[("seesaw", 1)] + us[("seesaw", 2)]) / (us[("base", 1)] + us[("base", 2)])
    err = max(runs[("seesaw", r)][key]["verification"]["max_abs_error"] for r in (1, 2))
    print(f"| {shape} | {q['heads_q'] * q.get('q_len', 1)} | {us[('base', 1)]:.2f} / {us[('base', 2)]:.2f} | "
          f"{us[('seesaw', 1)]:.2f} / {us[('seesaw', 2)]:.2f} | {ratio:.3f} | {err:.2e} |")
