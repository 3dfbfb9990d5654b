#!/usr/bin/env python3
"""Each point of a results file against its roofline bound, as issue-style tables state it:
bound = max(model bytes / the run's measured DRAM read ceiling, model FLOPs / the run's measured
FP16 tensor roof), both from the same file's `ceilings`.

  scripts/bound_table.py RESULTS.json [--experiment NAME] [--kernel NAME] [--floor-from FILE]

Prints one markdown row per timed point: its varied parameters, median time, bound, time / bound.
When the file's ceilings carry the read floor (`ceilings.dram_read.floor`, harness/read_floor.hpp),
or --floor-from names a results or ceilings file that does, two more columns: the floor bound,
max(the read floor at the model bytes, model FLOPs / the tensor roof), what any kernel moving those
bytes under the sweep's cold timing can reach, and time / floor bound. The floor is interpolated
as harness/read_floor.cpp does: linear between the two measured sizes around the bytes, along the
nearest end segment outside them.
"""
import argparse
import json
import sys


def floor_samples(doc):
    """(bytes, median_us) pairs of ceilings.dram_read.floor, sorted; [] when absent."""
    floor = ((doc.get("ceilings") or {}).get("dram_read") or {}).get("floor")
    if floor is None:
        return []
    try:
        pts = sorted({float(s["bytes"]): float(s["median_us"]) for s in floor["samples"]}.items())
    except (KeyError, TypeError, ValueError):
        sys.exit("bound_table: ceilings.dram_read.floor.samples: expected [{bytes, median_us}, ...]")
    return pts


def floor_us(samples, nbytes):
    if len(samples) < 2 or nbytes <= 0:
        return None
    hi = 1
    while hi + 1 < len(samples) and samples[hi][0] < nbytes:
        hi += 1
    (b0, t0), (b1, t1) = samples[hi - 1], samples[hi]
    return max(t0 + (t1 - t0) * (nbytes - b0) / (b1 - b0), 0.0)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"bound_table: cannot read {path}: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--experiment")
    ap.add_argument("--kernel")
    ap.add_argument("--floor-from", help="take the read floor from this file's ceilings")
    a = ap.parse_args()
    doc = load(a.results)
    try:
        read = doc["ceilings"]["dram_read"]["value"]  # GB/s
        roof = doc["ceilings"]["fp16_tensor"]["value"]  # TFLOP/s
    except (KeyError, TypeError):
        sys.exit(f"bound_table: {a.results} has no measured ceilings.dram_read and ceilings.fp16_tensor "
                 "(not a results file with measured ceilings)")
    floor_src = a.floor_from or a.results
    samples = floor_samples(load(a.floor_from)) if a.floor_from else floor_samples(doc)
    if a.floor_from and not samples:
        sys.exit(f"bound_table: {a.floor_from} has no ceilings.dram_read.floor")
    print(f"DRAM read ceiling {read:.1f} GB/s, FP16 tensor roof {roof:.1f} TFLOP/s"
          + (f"; read floor from {floor_src}" if samples else ""))
    if samples:
        print("| point | time (us) | bound (us) | time / bound | floor bound (us) | time / floor bound |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
    else:
        print("| point | time (us) | bound (us) | time / bound |")
        print("| --- | ---: | ---: | ---: |")
    for p in doc["points"]:
        c = p["parameters"]
        if a.experiment and p["experiment"] != a.experiment:
            continue
        if a.kernel and c.get("kernel") != a.kernel:
            continue
        t = (p.get("timing") or {}).get("median_us")
        if t is None:
            continue
        m = p["model"]
        compute = m["flops"] / roof / 1e6
        bound = max(m["bytes"] / read / 1e3, compute)
        row = f"| {p['id']} | {t:.1f} | {bound:.1f} | {t / bound:.2f} |"
        if samples:
            fb = max(floor_us(samples, m["bytes"]), compute)
            row += f" {fb:.1f} | {t / fb:.2f} |"
        print(row)


if __name__ == "__main__":
    main()
