#!/usr/bin/env python3
"""Per-launch block timing from a GPU probe's block timeline: when each kernel launch's blocks
started and ended, how busy the SMs were, how long the ramp, epilogue and tail were, and how much
the launches of one point (e.g. prefix, suffix and merge of a shared-prefix run) overlapped.

  scripts/block_timeline.py TIMELINE.csv [--sm-gantt OUT.csv]

TIMELINE.csv: point,launch,kernel,block,smid,start_ns,first_tile_ns,loop_end_ns,end_ns, times in
ns from the point's earliest block start; first_tile_ns and loop_end_ns may be empty, and a row
with no end_ns is a block that exited without work (counted as empty, otherwise ignored).
Prints one markdown section per point, in file order: a row per launch (times in us) and an
overlap line per pair of launches. --sm-gantt also writes point,smid,launch,busy_us: each SM's
busy time (union of its block intervals) per launch, for every SM and launch of the point.
"""
import argparse
import collections
import csv
import re
import statistics
import sys

HEADER = ["point", "launch", "kernel", "block", "smid", "start_ns", "first_tile_ns", "loop_end_ns",
          "end_ns"]
Block = collections.namedtuple("Block", "launch smid start first_tile loop_end end")


class Point:
    """One point's timed blocks, its empty-block count per launch and each launch's kernel."""

    def __init__(self):
        self.blocks = []
        self.empty = collections.Counter()
        self.kernels = {}


def refuse(path, line, msg):
    sys.exit(f"block_timeline: {path}: line {line}: {msg}")


def integer(path, line, row, name, optional=False):
    s = row[name].strip()
    if s == "" and optional:
        return None
    if not re.fullmatch(r"[0-9]+", s):
        refuse(path, line, f"{name} '{s}' is not a non-negative integer")
    return int(s)


def read_timeline(path):
    """{point: Point} in file order; refuses a malformed file by name and line."""
    points = {}
    try:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header != HEADER:
                refuse(path, 1, f"header {','.join(header or [])!r} is not {','.join(HEADER)!r}")
            for fields in reader:
                line = reader.line_num
                if not fields:
                    continue  # a blank line, e.g. at the end of the file
                if len(fields) != len(HEADER):
                    refuse(path, line, f"{len(fields)} fields, expected {len(HEADER)}")
                row = dict(zip(HEADER, fields))
                p = points.setdefault(row["point"], Point())
                launch = integer(path, line, row, "launch")
                integer(path, line, row, "block")
                smid = integer(path, line, row, "smid")
                # A launch is one kernel: two names under one launch number mean mixed-up rows.
                kernel = p.kernels.setdefault(launch, row["kernel"])
                if kernel != row["kernel"]:
                    refuse(path, line, f"launch {launch} of point '{row['point']}' is kernel "
                                       f"{kernel} on an earlier line, not {row['kernel']}")
                end = integer(path, line, row, "end_ns", optional=True)
                start = integer(path, line, row, "start_ns", optional=end is None)
                first_tile = integer(path, line, row, "first_tile_ns", optional=True)
                loop_end = integer(path, line, row, "loop_end_ns", optional=True)
                if end is None:
                    p.empty[launch] += 1
                    continue
                if end < start:
                    refuse(path, line, f"end_ns {end} is before start_ns {start}")
                p.blocks.append(Block(launch, smid, start, first_tile, loop_end, end))
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"block_timeline: cannot read {path}: {e}")
    except csv.Error as e:
        refuse(path, reader.line_num, f"not CSV: {e}")
    return points


def union_length(intervals):
    """Length of the union of [start, end] intervals: overlapping blocks on one SM count once."""
    total, cur_start, cur_end = 0, None, None
    for s, e in sorted(intervals):
        if cur_end is None or s > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = s, e
        else:
            cur_end = max(cur_end, e)
    if cur_end is not None:
        total += cur_end - cur_start
    return total


def tail_ns(blocks):
    """Last end minus the latest time the count of running blocks (start <= t < end) was still at
    least 90% of its peak: how long the last stragglers ran on a mostly drained launch."""
    deltas = collections.defaultdict(int)
    for b in blocks:
        deltas[b.start] += 1
        deltas[b.end] -= 1  # summed per instant, so a block ending as another starts is no dip
    times = sorted(deltas)
    counts, running = [], 0
    for t in times:
        running += deltas[t]
        counts.append(running)  # the count on [t, next time)
    peak = max(counts)
    if peak == 0:
        return 0  # only zero-length blocks: nothing ran
    last = max(i for i, c in enumerate(counts) if c >= 0.9 * peak)
    # The count is at least 90% of the peak up to (not including) the next event; the last event
    # ends every block, so there is one.
    return times[-1] - times[last + 1]


def busy_by_sm(blocks):
    """{smid: union length of its block intervals}."""
    by_sm = collections.defaultdict(list)
    for b in blocks:
        by_sm[b.smid].append((b.start, b.end))
    return {sm: union_length(iv) for sm, iv in by_sm.items()}


def us(ns):
    return f"{ns / 1000:.1f}"


def median_us(values):
    return us(statistics.median(values)) if values else "-"


def launch_row(launch, kernel, blocks, point_sms):
    first, last_start = min(b.start for b in blocks), max(b.start for b in blocks)
    last_end = max(b.end for b in blocks)
    span = last_end - first
    busy = sum(busy_by_sm(blocks).values())
    fraction = f"{busy / (point_sms * span):.3f}" if span else "-"
    ramp = median_us([b.first_tile - b.start for b in blocks if b.first_tile is not None])
    epilogue = median_us([b.end - b.loop_end for b in blocks if b.loop_end is not None])
    cells = [launch, kernel, len(blocks), len({b.smid for b in blocks}), us(first), us(last_start),
             us(last_end), us(span), fraction, ramp, epilogue, us(tail_ns(blocks))]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def print_point(name, p):
    by_launch = collections.defaultdict(list)
    for b in p.blocks:
        by_launch[b.launch].append(b)
    launches = sorted(by_launch)
    point_sms = len({b.smid for b in p.blocks})
    print(f"## {name}")
    print("| launch | kernel | blocks | SMs | first start (us) | last start (us) | last end (us) "
          "| span (us) | busy SM fraction | ramp (us) | epilogue (us) | tail (us) |")
    print("| ---: | --- |" + " ---: |" * 10)
    for launch in launches:
        print(launch_row(launch, p.kernels[launch], by_launch[launch], point_sms))
    print()  # ends the table, so the lines below are not read as rows
    for i, a in enumerate(launches):
        a_first = min(x.start for x in by_launch[a])
        a_end = max(x.end for x in by_launch[a])
        for b in launches[i + 1:]:
            bb = by_launch[b]
            overlap = max(0, min(a_end, max(x.end for x in bb)) - max(a_first, min(x.start for x in bb)))
            early = sum(x.start < a_end for x in bb) / len(bb)
            print(f"overlap launch {a} / launch {b}: {us(overlap)} us ({early:.3f} of launch {b}'s "
                  f"blocks started before launch {a}'s last end)")
    if p.empty:
        print("empty blocks (no end time): " +
              ", ".join(f"launch {l}: {n}" for l, n in sorted(p.empty.items())))
    print()


def write_gantt(path, points):
    try:
        with open(path, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["point", "smid", "launch", "busy_us"])
            for name, p in points.items():
                launches = sorted({b.launch for b in p.blocks})
                busy = {l: busy_by_sm([b for b in p.blocks if b.launch == l]) for l in launches}
                for sm in sorted({b.smid for b in p.blocks}):
                    for l in launches:
                        w.writerow([name, sm, l, f"{busy[l].get(sm, 0) / 1000:.3f}"])
    except OSError as e:
        sys.exit(f"block_timeline: cannot write {path}: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("timeline")
    ap.add_argument("--sm-gantt", metavar="OUT.csv")
    a = ap.parse_args()
    points = read_timeline(a.timeline)
    for name, p in points.items():
        print_point(name, p)
    if a.sm_gantt:
        write_gantt(a.sm_gantt, points)


if __name__ == "__main__":
    main()
