#!/usr/bin/env python3
"""The order of block-table loads and K/V copies in the paged kernels of an nvdisasm listing:
for each function over PagedKV, one line of L (LDG.E.CONSTANT: a block-table entry read through
the read-only path), C (LDGSTS: a 16-byte copy into shared memory) and | (a branch), in listing
order. A tile's copy loop reads `LLLLLLLLCCCCCCCCCCCCCCCC` when its eight reads go out before its
sixteen copies, `LLCCLCCLCC...` when each read waits for the one before it to be used.
  python3 sass_order.py LISTING.sass"""
import re
import sys

text = open(sys.argv[1]).read()
for body in re.split(r"//-+ \.text\.", text)[1:]:
    name = body.split()[0]
    if "PagedKV" not in name:
        continue
    order = ""
    for line in body.splitlines():
        if "LDG.E.CONSTANT" in line:
            order += "L"
        elif "LDGSTS" in line:
            order += "C"
        elif re.search(r"\bBRA\b", line) and order and order[-1] != "|":
            order += "|"
    print(name)
    print("  " + order)
