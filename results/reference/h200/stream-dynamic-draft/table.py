#!/usr/bin/env python3
"""The three-way A/B of stream-dynamic.patch on one H200 machine (gpu.txt): the models preset's
grouped d 128 experiments at 64 x 1K and 128 x 512, six runs of each side alternating
(ab-auto{1..6}.json: the patched build's auto, its static stream with the patch's change to the
next item's Q copy; ab-dynamic{1..6}.json: DECODE_BENCH_ROW_STREAM=dynamic; ab-off{1..6}.json: one
block an item). Runs 1-2 by run.sh, 3-6 by a second command on the same machine and build (run.log).
Prints one markdown table: the plans' stream_blocks (a `d` for the counter's handout), each side's
mean time over off's, the range of the six dynamic / off pairs, and the fraction of the read floor
(the floor's mean over the 18 runs over each side's mean time). Run from the repository root."""
import json
import statistics
from pathlib import Path

F = Path(__file__).resolve().parent
SIDES = ("auto", "dynamic", "off")
runs = {s: [{p["id"]: p for p in json.loads((F / f"ab-{s}{i}.json").read_text())["points"]}
            for i in range(1, 7)] for s in SIDES}
print("| point | items | auto plan | dynamic plan | auto / off | dynamic / off (range of 6 pairs) | dynamic / auto "
      "| of read floor: off, auto, dynamic | max error |")
print("| --- | ---: | ---: | ---: | ---: | --- | ---: | --- | ---: |")
for pid, p in runs["auto"][0].items():
    t = {s: [r[pid]["timing"]["median_us"] for r in runs[s]] for s in SIDES}
    assert all(r[pid]["verification"]["passed"] for s in SIDES for r in runs[s])
    err = max(r[pid]["verification"]["max_abs_error"] for s in SIDES for r in runs[s])
    floor = statistics.mean(r[pid]["achieved"]["read_floor_us"] for s in SIDES for r in runs[s])
    m = {s: statistics.mean(v) for s, v in t.items()}
    pairs = [d / o for d, o in zip(t["dynamic"], t["off"])]
    prm = p["parameters"]
    dyn_plan = runs["dynamic"][0][pid]["plan"]
    name = f"{pid.split('/', 1)[0]} {prm['layout']} {prm['dtype']} {prm['batch']} x {prm['T']}"
    print(f"| {name} | {prm['batch'] * prm['heads_kv']} | {p['plan']['stream_blocks']} | "
          f"{dyn_plan['stream_blocks']}{' d' if dyn_plan.get('stream_dynamic') else ''} | "
          f"{m['auto'] / m['off']:.4f} | {m['dynamic'] / m['off']:.4f} ({min(pairs):.3f}-{max(pairs):.3f}) | "
          f"{m['dynamic'] / m['auto']:.4f} | {floor / m['off']:.3f}, {floor / m['auto']:.3f}, {floor / m['dynamic']:.3f} | "
          f"{err:.1e} |")
