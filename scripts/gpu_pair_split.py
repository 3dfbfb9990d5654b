#!/usr/bin/env python3
"""Each point of one preset timed on two GPUs whose DRAM read ceilings differ (an H100 and an H200:
the same SMs and clocks, 1.4x the bandwidth), split into the time that scales with the read
ceiling and the time that does not.

  scripts/gpu_pair_split.py A.json B.json [B2.json ...] [--experiment NAME]

The model: a point's time is u + s, s the part that moves with the read ceiling (bytes over a fixed
share of it) and u the part that does not: fixed costs (launch, the ramp to a block's first tile,
dependent round trips, instruction chains, the merge) and any stream whose rate is set by
something else than the bus (bytes in flight over latency, where too few are in flight). With
r = ceiling_A / ceiling_B (each file's `ceilings.dram_read.value`), t_A = u + s and t_B = u + r s,
so on A s = (t_A - t_B) / (1 - r) and u = t_A - s. An unscaled part near t_A says the point's time
is not in the bus; near 0, that the point streams at a fixed share of it.

Later B files replace earlier ones' points of the same id (ids compared without a trailing
`/counters=false`), so a re-run of some points at the plan A ran can stand in for B's; r takes the
first B file's ceiling, and a B file whose ceiling is more than 1% from it is refused. A point is
split only where both files timed it and planned it alike (the plan's family, splits, blocks an
SM, tile and uniform length); the others are listed with the reason. Exits 1 on a file it cannot
read or one without the read ceiling.
"""
import argparse
import json
import sys

PLAN_KEYS = ("family", "num_splits", "blocks_per_sm", "tile_tokens", "uniform_len", "wgmma")


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"gpu_pair_split: cannot read {path}: {e}")
    try:
        ceiling = float(doc["ceilings"]["dram_read"]["value"])
    except (KeyError, TypeError, ValueError):
        sys.exit(f"gpu_pair_split: {path}: no ceilings.dram_read.value (run the sweep with its ceilings)")
    if ceiling <= 0:
        sys.exit(f"gpu_pair_split: {path}: ceilings.dram_read.value is {ceiling}, not a bandwidth")
    return doc, ceiling


def key(point_id):
    return point_id[: -len("/counters=false")] if point_id.endswith("/counters=false") else point_id


def timed(doc):
    return {key(p["id"]): p for p in doc.get("points", []) if p.get("timing")}


def device(doc):
    return (doc.get("device") or {}).get("name", "?")


def plan_of(point):
    plan = point.get("plan") or {}
    return tuple(plan.get(k) for k in PLAN_KEYS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="results file of the GPU with the lower read ceiling")
    ap.add_argument("b", nargs="+", help="results file(s) of the other GPU; later ones replace earlier points")
    ap.add_argument("--experiment", action="append", help="only these experiments (repeatable)")
    args = ap.parse_args()

    doc_a, ceiling_a = load(args.a)
    docs_b = [load(path) for path in args.b]
    ceiling_b = docs_b[0][1]
    for path, (_, c) in zip(args.b, docs_b):
        if abs(c / ceiling_b - 1.0) > 0.01:
            sys.exit(f"gpu_pair_split: {path}: read ceiling {c:.1f} GB/s, more than 1% from the first B file's "
                     f"{ceiling_b:.1f}: give runs of one GPU")
    if ceiling_b <= ceiling_a:
        sys.exit(f"gpu_pair_split: B's read ceiling ({ceiling_b:.1f} GB/s) is not above A's ({ceiling_a:.1f})")
    r = ceiling_a / ceiling_b
    points_a = timed(doc_a)
    points_b = {}
    for doc, _ in docs_b:
        points_b.update(timed(doc))

    print(f"- A: {device(doc_a)}, read ceiling {ceiling_a:.1f} GB/s; B: {device(docs_b[0][0])}, "
          f"{ceiling_b:.1f} GB/s; r = A / B = {r:.4f}")
    print("- time = unscaled + scaled; scaled on B = r x scaled on A; both parts in us on A")
    print()
    print("| point | A us | B us | B / A | unscaled us | unscaled / A | scaled us |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    skipped = []
    for pid, pa in points_a.items():
        if args.experiment and pa.get("experiment") not in args.experiment:
            continue
        pb = points_b.get(pid)
        if pb is None:
            skipped.append((pid, "not timed in B"))
            continue
        if plan_of(pa) != plan_of(pb):
            differ = [f"{k} {x} against {y}" for k, x, y in zip(PLAN_KEYS, plan_of(pa), plan_of(pb)) if x != y]
            skipped.append((pid, "plans differ: " + ", ".join(differ)))
            continue
        t_a, t_b = pa["timing"]["median_us"], pb["timing"]["median_us"]
        scaled = (t_a - t_b) / (1.0 - r)
        unscaled = t_a - scaled
        print(f"| `{pid}` | {t_a:.2f} | {t_b:.2f} | {t_b / t_a:.3f} | {unscaled:.2f} | {unscaled / t_a:.3f} | "
              f"{scaled:.2f} |")
    if skipped:
        print()
        print("Not split:")
        for pid, why in skipped:
            print(f"- `{pid}`: {why}")


if __name__ == "__main__":
    main()
