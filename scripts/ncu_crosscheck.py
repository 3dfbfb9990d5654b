#!/usr/bin/env python3
"""Compare decode-bench's CUPTI counters with Nsight Compute's on the profile-selftest kernels.

Inputs (both written by scripts/gpu_check.sh): the `decode-bench profile-selftest` log, whose
blocks read "== name (kernel K)" then "  metric  value ...", and `ncu --csv` of the same command
run with --no-counters. Prints one row per (kernel, metric) and exits 1 if a significant metric
differs by more than the tolerance. Significant: instruction counts and durations always; byte
counts when either side is at least 1 MiB and 1% of the kernel's largest byte count (a few MB of L2
write-back beside a 1 GB read is noise of the flush, not of the counter).
Usage: ncu_crosscheck.py SELFTEST_LOG NCU_CSV [--tolerance 0.02]
"""
import argparse
import csv
import re
import sys


def read_selftest(path):
    kernels, current = {}, None
    for line in open(path):
        m = re.match(r"^== (\S+) \(kernel (\S+)\)", line)
        if m:
            current = kernels.setdefault(m.group(2), {})
            continue
        m = re.match(r"^\s+([a-z0-9_.]+)\s+(-?[0-9.e+]+)", line)
        if m and current is not None:
            current[m.group(1)] = float(m.group(2))
    return kernels


def read_ncu(path):
    rows = [line for line in open(path) if line.startswith('"')]
    kernels = {}
    for row in csv.DictReader(rows):
        name = re.search(r"(selftest_\w+)", row["Kernel Name"])
        if not name:
            continue
        value = float(row["Metric Value"].replace(",", ""))
        unit = row["Metric Unit"]
        scale = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9,
                 "hz": 1.0, "Khz": 1e3, "Mhz": 1e6, "Ghz": 1e9}.get(unit, 1.0)
        kernels.setdefault(name.group(1), {})[row["Metric Name"]] = value * scale
    return kernels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("selftest_log")
    ap.add_argument("ncu_csv")
    ap.add_argument("--tolerance", type=float, default=0.02)
    a = ap.parse_args()
    ours, theirs = read_selftest(a.selftest_log), read_ncu(a.ncu_csv)
    if not ours or not theirs:
        sys.exit("no kernels found in one of the inputs (selftest log: %d, ncu csv: %d)" % (len(ours), len(theirs)))
    bad = 0
    print(f"{'kernel':24} {'metric':52} {'CUPTI':>16} {'ncu':>16} {'rel diff':>9}  verdict")
    for kernel, metrics in sorted(ours.items()):
        other = theirs.get(kernel, {})
        biggest_bytes = max([v for k, v in metrics.items() if "bytes" in k] + [1.0])
        for metric, value in sorted(metrics.items()):
            if metric not in other:
                continue
            ref = other[metric]
            rel = abs(value - ref) / max(abs(value), abs(ref)) if max(abs(value), abs(ref)) > 0 else 0.0
            if "bytes" in metric and max(value, ref) < max(0.01 * biggest_bytes, 1 << 20):
                verdict = "noise (< 1 MiB or < 1% of the kernel's bytes)"
            elif "per_second" in metric:
                verdict = "clock (not compared)"
            else:
                ok = rel <= a.tolerance
                bad += not ok
                verdict = "ok" if ok else f"OFF by more than {a.tolerance:.0%}"
            print(f"{kernel:24} {metric:52} {value:16.6g} {ref:16.6g} {rel:9.4f}  {verdict}")
    print(f"\n{bad} significant metric(s) outside {a.tolerance:.0%}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
