#!/usr/bin/env python3
"""Static SASS census of the loops of CUDA kernels: for each kernel whose mangled name contains
PATTERN, its instruction count, then each loop (a branch back to a label at or before it: the
loop body is the label to the branch) with its instruction count and the count of each opcode
named by --ops. A count first, before a GPU run (docs/history/kernel-notes.md): ncu gives the executed
counts; this gives what one pass of a loop body holds, including branches it may skip.

  nvdisasm kernel.cubin > kernel.sass   (cuobjdump -xelf all object.o extracts the cubin)
  scripts/sass_loops.py kernel.sass PATTERN [--ops HMMA,LDGSTS] [--min-ops HMMA]
"""
import argparse
import collections
import re
import sys


def kernels_of(lines):
    """Yields (mangled name, [(opcode, operands)], {label: instruction index}) per kernel."""
    name, ins, labels = None, [], {}
    for line in lines:
        m = re.match(r'^\.text\.(\S+):', line)
        if m:
            if name:
                yield name, ins, labels
            name, ins, labels = m.group(1), [], {}
            continue
        if name is None:
            continue
        m = re.match(r'^(\.L_x_\d+):', line)
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = re.search(r'/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)(.*)', line)
        if m:
            ins.append((m.group(1), m.group(2)))
    if name:
        yield name, ins, labels


def loops_of(ins, labels):
    for i, (op, rest) in enumerate(ins):
        m = re.search(r'`\((\.L_x_\d+)\)', rest)
        if op.startswith('BRA') and m and labels.get(m.group(1), i) < i:  # not a branch to itself
            yield ins[labels[m.group(1)]:i + 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('sass')
    ap.add_argument('pattern')
    ap.add_argument('--ops', default='HMMA,MUFU,SHFL,FMNMX,FADD,FMUL,LDSM,LDGSTS')
    ap.add_argument('--min-ops', default='', help='list only loops holding this opcode')
    a = ap.parse_args()
    ops = [o for o in a.ops.split(',') if o]
    found = False
    try:
        f = open(a.sass)
    except OSError as e:
        sys.exit(f'sass_loops: cannot read {a.sass}: {e.strerror}')
    with f:
        for name, ins, labels in kernels_of(f):
            if a.pattern not in name:
                continue
            found = True
            print(f'{name}: {len(ins)} instructions')
            for body in loops_of(ins, labels):
                count = collections.Counter(op.split('.')[0] for op, _ in body)
                if a.min_ops and not count[a.min_ops]:
                    continue
                print(f'  loop: {len(body)} instructions; ' + ', '.join(f'{o} {count[o]}' for o in ops))
    if not found:
        sys.exit(f'no kernel name contains {a.pattern!r}')


if __name__ == '__main__':
    main()
