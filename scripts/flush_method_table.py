#!/usr/bin/env python3
"""What flushing L2 by writing adds to a launch: two results files of one preset, one run with
timing=cold (the read flush) and one with timing=cold_write, paired point by point.

  python3 scripts/flush_method_table.py COLD.json COLD_WRITE.json [--backend NAME ...]

Prints a markdown table (per point: experiment, backend, shape, both medians, the difference in
us and the ratio) and a line per backend with the median difference. Plain python3.
"""
import argparse
import json
import statistics
import sys


def points(path, mode):
    with open(path) as f:
        run = json.load(f)
    out = {}
    for p in run["points"]:
        if p.get("status") != "ok":
            continue
        params = dict(p["parameters"])
        if params.pop("timing", "cold") != mode:
            sys.exit(f"flush_method_table: {path}: point {p['id']} was timed {p['parameters'].get('timing')}, not {mode}")
        params.pop("counters", None)
        out[(p["experiment"], json.dumps(params, sort_keys=True))] = p
    return run, out


def shape(params):
    keys = ["layout", "dtype", "heads_q", "heads_kv", "head_dim", "batch", "T", "prefix_len", "page_size"]
    return " ".join(f"{k}={params[k]}" for k in keys if k in params and params[k] not in (None, 0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cold")
    ap.add_argument("cold_write")
    ap.add_argument("--backend", action="append", help="only these backends (repeatable)")
    args = ap.parse_args()
    run_a, a = points(args.cold, "cold")
    _, b = points(args.cold_write, "cold_write")
    git = run_a.get("meta", {}).get("git", {})
    print(f"<!-- python3 scripts/flush_method_table.py {args.cold} {args.cold_write}"
          + "".join(f" --backend {n}" for n in args.backend or []) + " -->")
    print(f"Commit {str(git.get('sha', 'unknown'))[:7]}, {run_a.get('device', {}).get('name', '?')}; "
          "medians in us; write flush - read flush.\n")
    print("| experiment | backend | shape | cold | cold_write | difference | ratio |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    deltas = {}
    for key in sorted(a.keys() & b.keys()):
        pa, pb = a[key], b[key]
        backend = pa["backend"]["name"] if isinstance(pa["backend"], dict) else pa["backend"]
        if args.backend and backend not in args.backend:
            continue
        ta, tb = pa["timing"]["median_us"], pb["timing"]["median_us"]
        deltas.setdefault(backend, []).append(tb - ta)
        print(f"| {key[0]} | {backend} | {shape(pa['parameters'])} | {ta:.1f} | {tb:.1f} | {tb - ta:+.1f} | {tb / ta:.3f} |")
    print()
    for backend, d in sorted(deltas.items()):
        print(f"- {backend}: {len(d)} points, median difference {statistics.median(d):+.1f} us "
              f"(min {min(d):+.1f}, max {max(d):+.1f})")


if __name__ == "__main__":
    main()
