#!/usr/bin/env python3
"""Warp-stall samples of one MLA attention kernel by stretch of SASS between landmarks.

Reads an Nsight Compute source page export at SASS level (ncu --page source --print-source sass
--csv, gzipped: the kernel name on the first line, the header on the second, one row per
instruction) and cuts the instructions after each landmark (HGMMA, BAR.SYNC, WARPGROUP.ARRIVE,
WARPGROUP.DEPBAR, DEPBAR, LDGSTS, MUFU.EX2, SHFL, BRA, EXIT); runs of HGMMA, LDGSTS, MUFU.EX2 and
SHFL are one stretch. A stretch is its samples up to and including its landmark: a deferred
barrier's stall lands on the first blocking instruction after it, so a barrier's wait shows on
the stretch that ends at that instruction. Stretches with 0.5% of the samples or more are listed,
with their two largest stall reasons. Standard library only.

  python3 segments.py ncu-...-source.csv.gz > segments-....md
"""
import csv
import gzip
import re
import sys

ALL = "Warp Stall Sampling (All Samples)"
LANDMARK = re.compile(r"HGMMA|BAR\.SYNC|WARPGROUP\.DEPBAR|DEPBAR\.LE SB0|LDGSTS|MUFU\.EX2|SHFL|EXIT|WARPGROUP\.ARRIVE|BRA")
RUNS = ("HGMMA", "LDGSTS", "MUFU", "SHFL")


def num(s):
    s = s.strip().replace(",", "")
    return float(s) if s not in ("", "-") else 0.0


def opcode(src):
    toks = src.split()
    op = toks[1] if toks and toks[0].startswith("@") and len(toks) > 1 else (toks[0] if toks else "")
    return op.split(".")[0]


def main(path):
    lines = gzip.open(path, "rt").read().splitlines()
    kernel = next(csv.reader([lines[0]]))[1]
    rows = list(csv.reader(lines[1:]))
    col = {h: i for i, h in enumerate(rows[0])}
    rows = rows[1:]
    stalls = [h for h in col if h.startswith("stall_") and "Not Issued" not in h]
    base = int(rows[0][col["Address"]], 16)
    samples = [num(r[col[ALL]]) for r in rows]
    total = sum(samples)
    stretches, start = [], 0
    for i, r in enumerate(rows):
        src = " ".join(r[col["Source"]].split())
        if not LANDMARK.search(src):
            continue
        op = opcode(src)
        reasons = {h: sum(num(rows[k][col[h]]) for k in range(start, i + 1)) for h in stalls}
        if stretches and stretches[-1]["op"] == op and op in RUNS:
            s = stretches[-1]
            s["samples"] += sum(samples[start:i + 1])
            s["count"] += 1
            for h, v in reasons.items():
                s["reasons"][h] += v
        else:
            stretches.append({"off": int(r[col["Address"]], 16) - base, "op": op, "src": src,
                              "samples": sum(samples[start:i + 1]), "count": 1, "reasons": reasons,
                              "executed": int(num(r[col["Instructions Executed"]]))})
        start = i + 1
    print(f"<!-- python3 {' '.join(sys.argv)} -->")
    print(f"Kernel: `{kernel}`; {int(total)} samples.\n")
    print("| offset | landmark (first of the run) | run | executed | samples % | top 2 stall reasons |")
    print("| --- | --- | --: | --: | --: | --- |")
    for s in stretches:
        if s["samples"] / total < 0.005:
            continue
        top = sorted(s["reasons"].items(), key=lambda t: -t[1])[:2]
        why = ", ".join(f"{h[6:]} {v / s['samples'] * 100:.0f}%" for h, v in top if s["samples"] > 0)
        print(f"| {s['off']:#07x} | `{s['src'][:70]}` | {s['count']} | {s['executed']} | "
              f"{s['samples'] / total * 100:.1f} | {why} |")


if __name__ == "__main__":
    main(sys.argv[1])
