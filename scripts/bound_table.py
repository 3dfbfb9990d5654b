#!/usr/bin/env python3
"""Each point of a results file against its roofline bound, as issue-style tables state it:
bound = max(model bytes / the run's measured DRAM read ceiling, model FLOPs / the run's measured
FP16 tensor roof), both from the same file's `ceilings`.

  scripts/bound_table.py RESULTS.json [--experiment NAME] [--kernel NAME]

Prints one markdown row per timed point: its varied parameters, median time, bound, time / bound.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--experiment")
    ap.add_argument("--kernel")
    a = ap.parse_args()
    try:
        with open(a.results) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"bound_table: cannot read {a.results}: {e}")
    try:
        read = doc["ceilings"]["dram_read"]["value"]  # GB/s
        roof = doc["ceilings"]["fp16_tensor"]["value"]  # TFLOP/s
    except (KeyError, TypeError):
        sys.exit(f"bound_table: {a.results} has no measured ceilings.dram_read and ceilings.fp16_tensor "
                 "(not a results file with measured ceilings)")
    print(f"DRAM read ceiling {read:.1f} GB/s, FP16 tensor roof {roof:.1f} TFLOP/s")
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
        bound = max(m["bytes"] / read / 1e3, m["flops"] / roof / 1e6)
        print(f"| {p['id']} | {t:.1f} | {bound:.1f} | {t / bound:.2f} |")


if __name__ == "__main__":
    main()
