#!/usr/bin/env python3
"""The probe's masked section (probe-1.txt, probe-2.txt) as a table: each tiling's median us in both
rounds and the rounds' sum over the library tiling's (U=8 S=2), per shape and layout."""
import pathlib
import re
import sys

folder = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent)
line = re.compile(r"^V (\S+) .* U=(\d+) +W=(\d+) S=(\d+) .* tile=(\d+) .* pg=(\d+) .* (\d+\.\d+) us +\S+ GB/s +(\S+)%")
rows = {}
for n in (1, 2):
    for text in (folder / f"probe-{n}.txt").read_text().splitlines():
        m = line.match(text)
        if m:
            shape, u, w, s, tile, page, us, share = m.groups()
            rows.setdefault((shape, int(page), int(u), int(s), int(tile)), []).append((float(us), float(share)))
ceiling = re.search(r"DRAM read ceiling \(probe\): (\S+) GB/s", (folder / "probe-2.txt").read_text()).group(1)
print(f"<!-- python3 {folder}/table.py -->")
print("Median us of each round (1 / 2); ratio: the rounds' sum over the library tiling's (U 8, S 2); "
      f"of ceiling: fraction of the probe's measured DRAM read ceiling ({ceiling} GB/s), round 2.\n")
print("| shape | layout | unroll | stages | tile | us (1 / 2) | ratio | of ceiling |")
print("| --- | --- | --: | --: | --: | --- | --: | --: |")
for (shape, page, u, s, tile), vals in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1], -kv[0][2], kv[0][3])):
    base = sum(v[0] for v in rows[(shape, page, 8, 2, 128)])
    layout = f"paged {page}" if page else "contiguous"
    us = " / ".join(f"{v[0]:.1f}" for v in vals)
    print(f"| {shape} | {layout} | {u} | {s} | {tile} | {us} | {sum(v[0] for v in vals) / base:.3f} | {vals[-1][1] / 100:.3f} |")
