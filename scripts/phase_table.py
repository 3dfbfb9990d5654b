#!/usr/bin/env python3
"""Where a sweep's wall time went, from results files (or their .partial.jsonl sidecars).

  scripts/phase_table.py BEFORE.json [AFTER.json]

Prints per file: wall time summed over points, measured time, each run.phases total, the largest
per-point overhead; with two files also the median_us ratio of the points both timed (a check that
the measured numbers did not move). Only points present in the file count, so a sweep cut short
(its sidecar) is compared on the points it finished.
"""
import json
import statistics
import sys

PHASES = ["pool_build", "data_fill", "reference", "verification", "timing", "counters", "other"]


def load_points(path):
    if path.endswith(".jsonl"):
        points = []
        with open(path) as f:
            for line in f:
                rec = json.loads(line)
                if "id" in rec and "status" in rec:
                    points.append(rec)
        return points, None
    with open(path) as f:
        doc = json.load(f)
    return doc["points"], doc.get("meta", {}).get("sweep", {})


def summary(points):
    out = {p: 0.0 for p in PHASES}
    wall = measured = 0.0
    worst = (0.0, "")
    for pt in points:
        run = pt.get("run", {})
        wall += run.get("wall_seconds", 0.0)
        measured += run.get("measured_seconds", 0.0)
        if run.get("overhead_seconds", 0.0) > worst[0]:
            worst = (run["overhead_seconds"], pt["id"])
        for name, s in run.get("phases", {}).items():
            out[name] = out.get(name, 0.0) + s
    return wall, measured, out, worst


def main(paths):
    loaded = [load_points(p) for p in paths]
    rows = [summary(pts) for pts, _ in loaded]
    names = [p.split("/")[-1] for p in paths]
    print("| phase (s) | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(paths))
    print("| points | " + " | ".join(str(len(pts)) for pts, _ in loaded) + " |")
    print("| sweep wall (meta) | " + " | ".join(
        f"{meta['wall_seconds']:.1f}" if meta else "(cut short)" for _, meta in loaded) + " |")
    print("| sum of point walls | " + " | ".join(f"{r[0]:.1f}" for r in rows) + " |")
    print("| measured | " + " | ".join(f"{r[1]:.3f}" for r in rows) + " |")
    for name in sorted({n for r in rows for n in r[2]}, key=lambda n: PHASES.index(n) if n in PHASES else 99):
        print(f"| {name} | " + " | ".join(f"{r[2].get(name, 0.0):.2f}" for r in rows) + " |")
    print("| max point overhead | " + " | ".join(f"{r[3][0]:.2f} ({r[3][1]})" for r in rows) + " |")
    if len(loaded) == 2:
        a = {p["id"]: p for p in loaded[0][0] if p.get("status") == "ok" and "timing" in p}
        b = {p["id"]: p for p in loaded[1][0] if p.get("status") == "ok" and "timing" in p}
        ratios = sorted((b[i]["timing"]["median_us"] / a[i]["timing"]["median_us"], i) for i in a.keys() & b.keys()
                        if a[i].get("timing", {}).get("method") != "host_steady_clock")
        if ratios:
            print(f"\nmedian_us after/before over {len(ratios)} common ok points: median "
                  f"{statistics.median(r for r, _ in ratios):.3f}, min {ratios[0][0]:.3f} ({ratios[0][1]}), "
                  f"max {ratios[-1][0]:.3f} ({ratios[-1][1]})")


if __name__ == "__main__":
    if not 1 <= len(sys.argv) - 1 <= 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
