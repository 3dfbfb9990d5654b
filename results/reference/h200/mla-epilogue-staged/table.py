#!/usr/bin/env python3
"""Tables of this folder's runs (README.md): the MLA warpgroup-MMA kernel's O staged through the
stages against the direct stores, two rounds alternating on one machine, for each build.

  python3 results/reference/h200/mla-epilogue-staged/table.py > results/reference/h200/mla-epilogue-staged/table.md
"""
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
BUILDS = {"first-build": "staged at every row count", "final": "staged above 48 rows (fed8aa0)"}


def points(path):
    return {p["id"]: p for p in json.loads(path.read_text())["points"]}


print("<!-- python3 results/reference/h200/mla-epilogue-staged/table.py -->")
for build, what in BUILDS.items():
    print(f"\n## {build}: {what}\n")
    print("Median us of each round (1 / 2); new / base: the two rounds' sum of the new build over the base.\n")
    print("| config | point | rows | kernel | base | new | new / base |")
    print("| --- | --- | ---: | --- | --- | --- | ---: |")
    for cfg in ("mla16", "ab2"):
        runs = {(side, r): points(HERE / build / f"{cfg}-{side}-{r}.json") for side in ("base", "new") for r in (1, 2)}
        for key, p in runs[("base", 1)].items():
            if any(d[key]["status"] != "ok" for d in runs.values()):
                print(f"| {cfg} | {key} | | | failed | | |")
                continue
            q = p["parameters"]
            us = {k: d[key]["timing"]["median_us"] for k, d in runs.items()}
            ratio = (us[("new", 1)] + us[("new", 2)]) / (us[("base", 1)] + us[("base", 2)])
            rows = q["heads_q"] * q.get("q_len", 1)
            shape = f"{q['batch']} x {q['T'] // 1024}K, {q['dtype']}, h_q {q['heads_q']}, q_len {q.get('q_len', 1)}"
            print(f"| {cfg} | {shape} | {rows} | {runs[('new', 1)][key]['plan']['kernel']} | "
                  f"{us[('base', 1)]:.2f} / {us[('base', 2)]:.2f} | {us[('new', 1)]:.2f} / {us[('new', 2)]:.2f} | {ratio:.3f} |")
