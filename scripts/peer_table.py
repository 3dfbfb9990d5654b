#!/usr/bin/env python3
"""Joins decode-bench sweep results with a peer's timings of the same shapes (scripts/peer_sdpa.py).

  python3 scripts/peer_table.py RESULTS.json [RESULTS2.json ...] --peer peer.json [--markdown]

A sweep point matches a peer point when batch, T, heads_q, heads_kv, head_dim and dtype agree and
its lengths are fixed (length_dist absent or "fixed") with no shared prefix, and decode-bench's own
kernels computed it (backend absent or "decode-bench": `decode-bench show FILE --by-backend` sets
the other backends of a file beside them). Prints one row per
matching ok point: decode-bench's median, its fraction of the run's DRAM read ceiling, the read
floor at its size (harness/read_floor.hpp: the ceiling's read kernels over the same bytes, cold)
and its fraction of that floor when the run measured one, the peer's median and the speedup (peer
time / decode-bench time).
"""
import argparse
import json
import sys

KEYS = ("batch", "T", "heads_q", "heads_kv", "head_dim", "dtype")


def shape_key(params):
    return tuple(params.get(k) for k in KEYS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--peer", required=True)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    peer_doc = json.load(open(args.peer))
    peer = {shape_key(p): p for p in peer_doc["points"]}
    rows = []
    for path in args.results:
        doc = json.load(open(path))
        for p in doc["points"]:
            par = p["parameters"]
            if p.get("status") != "ok" or par.get("length_dist", "fixed") != "fixed" or par.get("prefix_len", 0):
                continue
            if par.get("backend", "decode-bench") != "decode-bench":
                continue
            key = shape_key({**par, "batch": par.get("batch", 1)})
            if key not in peer:
                continue
            med = p["timing"]["median_us"]
            achieved = p.get("achieved", {})
            frac = achieved.get("fraction_of_dram_read")
            floor = achieved.get("read_floor_us")
            rows.append((p["id"], par.get("layout", "contiguous"), med, frac, floor, peer[key]["median_us"]))
    if not rows:
        sys.exit("no sweep point matches a peer shape")
    name = peer_doc["meta"].get("peer", "peer").split(".")[-1]
    def floor_cells(floor, med):
        return ("-", "-") if floor is None else (f"{floor:.1f}", f"{floor / med:.3f}")

    if args.markdown:
        print(f"| point | layout | decode-bench (us) | of DRAM read | read floor (us) | of floor | {name} (us) | speedup |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for pid, layout, med, frac, floor, pm in rows:
            fl, of = floor_cells(floor, med)
            print(f"| {pid} | {layout} | {med:.1f} | {frac:.3f} | {fl} | {of} | {pm:.1f} | {pm / med:.2f}x |")
    else:
        for pid, layout, med, frac, floor, pm in rows:
            fl, of = floor_cells(floor, med)
            print(f"{pid:90s} {layout:10s} {med:9.1f} us {frac:6.3f}  floor {fl:>7s} us {of:>6s}  "
                  f"{name} {pm:9.1f} us  {pm / med:5.2f}x")


if __name__ == "__main__":
    main()
