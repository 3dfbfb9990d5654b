#!/usr/bin/env python3
"""Static SASS census of the loops of CUDA kernels: for each kernel whose mangled name contains
PATTERN, its instruction count, then each loop (a branch back to a label at or before it: the
loop body is the label to the branch) with its instruction count and the count of each opcode
named by --ops. A count first, before a GPU run (docs/history/kernel-notes.md): ncu gives the executed
counts; this gives what one pass of a loop body holds, including branches it may skip.

  nvdisasm kernel.cubin > kernel.sass   (cuobjdump -xelf all object.o extracts the cubin)
  scripts/sass_loops.py kernel.sass PATTERN [--ops HMMA,LDGSTS] [--min-ops HMMA] [--check-wgmma-a]
                        [--check-wgmma-serial]

--check-wgmma-a: a warpgroup MMA (HGMMA) whose A operand is in registers must find them intact.
CLOBBERED: in a loop, A registers not written before the HGMMA in the loop (a value from before the
loop, like Q's fragments) must not be written later in the loop either, or the next pass reads the
clobbered value; ptxas of CUDA 13.0 did that to the row kernel's Q fragments after a reordering of
its source (docs/kernels/rows_wgmma.md, "A register-allocation defect of ptxas 13.0"). A fragment
the loop carries on purpose (P packed at a pass's end for the P V of the next) passes: each of its
registers is last written by an F2FP pack that no later HGMMA of the same pass reads. IN FLIGHT:
no instruction may write them between the HGMMA and the next warpgroup wait, while the MMA may
still read them. Each finding is printed; the exit status is 1 if there is one.

--check-wgmma-serial: SERIALISED, a kernel whose every HGMMA (two or more) is a group of its own
(gsb0) waited for (WARPGROUP.DEPBAR) before the next HGMMA: what ptxas emits when it serialises a
kernel's warpgroup MMAs, which it reports as information (C7511, C7513, ...) or, as seen at d 64,
not at all (docs/decisions/wgmma-register-operands-check.md). Exit status 1 if a kernel is.
"""
import argparse
import collections
import re
import sys


def kernels_of(lines):
    """Yields (mangled name, [(opcode, operands, address)], {label: instruction index}) per kernel."""
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
        m = re.search(r'/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)(.*)', line)
        if m:
            ins.append((m.group(2), m.group(3), m.group(1)))
    if name:
        yield name, ins, labels


def written_registers(op, rest):
    """The registers an instruction writes: its first operand when that is a register (stores,
    branches and predicate results have none; SHFL's is its second), as many as its width. Widths
    are read from the opcode: .64 two, .128 four, CS2R and IMAD.WIDE two, HGMMA.64xN .F32 N / 2 and
    .F16 N / 4, LDSM .2 / .4 two / four; one otherwise."""
    m = re.match(r'\s*R(\d+)\b', rest)
    if op.startswith('SHFL'):  # SHFL.BFLY PT, R9, R8, ..: a predicate, then the register written
        m = re.match(r'\s*!?U?P\w+\s*,\s*R(\d+)\b', rest)
    if not m:
        return set()
    first, width = int(m.group(1)), 1
    parts = op.split('.')
    if parts[0] == 'HGMMA':
        shape = re.match(r'64x(\d+)x\d+', parts[1]) if len(parts) > 1 else None
        n = int(shape.group(1)) if shape else 8
        width = n // 2 if 'F32' in parts else n // 4
    elif '128' in parts:
        width = 4
    elif '64' in parts or parts[0] == 'CS2R' or (parts[0] == 'IMAD' and 'WIDE' in parts):
        width = 2
    elif parts[0] == 'LDSM':
        width = 4 if '4' in parts else 2 if '2' in parts else 1
    return set(range(first, first + width))


def register_a_operand(op, rest):
    """The four registers of an HGMMA's A operand when it is in registers (HGMMA Rd, Ra, gdesc..),
    else None (A from shared memory: HGMMA Rd, gdesc[..], ..)."""
    if not op.startswith('HGMMA'):
        return None
    m = re.match(r'\s*R\d+\s*,\s*R(\d+)\s*,', rest)
    return set(range(int(m.group(1)), int(m.group(1)) + 4)) if m else None


def clobbered_wgmma_a(body):
    """Yields (HGMMA address, A registers, address and opcode of the offending write) for each
    HGMMA of the loop body whose register A operand the body does not write before it but writes
    after it, unless each of the four registers is last written after it by an F2FP pack that no
    later HGMMA of the pass reads: then the loop carries a fragment it made into the next pass (P
    of one tile, read by the P V issued behind the next tile's S), and the registers may hold
    scratch values before the pack."""
    for j, (op, rest, addr) in enumerate(body):
        a = register_a_operand(op, rest)
        if not a:
            continue
        if any(written_registers(o, r) & a for o, r, _ in body[:j]):
            continue  # defined in the loop before its use: a value of this pass (P), not a clobber
        first, last = None, {}  # register -> (body index, address, opcode) of its last write
        for k in range(j + 1, len(body)):
            o, r, w = body[k]
            hit = written_registers(o, r) & a
            if hit:
                first = first or (w, o)
                for reg in hit:
                    last[reg] = (k, w, o)
        if first is None:
            continue
        not_packed = [(w, o) for _, w, o in sorted(last.values()) if not o.startswith('F2FP')]
        packed_end = max(k for k, _, _ in last.values())
        # A pack read by an HGMMA later in the same pass is that pass's P, packed over the registers
        # this HGMMA reads next pass (the form of ptxas 13.0's defect): a clobber.
        read_in_pass = any((register_a_operand(o, r) or set()) & a for o, r, _ in body[packed_end + 1:])
        if not_packed:
            yield addr, a, *not_packed[-1]
        elif len(last) < len(a) or read_in_pass:
            yield addr, a, *first


def written_in_flight(ins, labels):
    """Yields (HGMMA address, A registers, address and opcode of the write) for each HGMMA with a
    register A operand whose registers are written before the next warpgroup wait
    (WARPGROUP.DEPBAR): the MMA may still be reading them. The walk follows the fall-through path,
    and once the branch of a loop back to its top; it ends at the wait or at EXIT."""
    for j, (op, rest, addr) in enumerate(ins):
        a = register_a_operand(op, rest)
        if not a:
            continue
        k, wrapped = j + 1, False
        while k < len(ins) and k != j:
            o, r, w = ins[k]
            if o.startswith('WARPGROUP.DEPBAR') or o.startswith('EXIT'):
                break
            if written_registers(o, r) & a:
                yield addr, a, w, o
                break
            m = re.search(r'`\((\.L_x_\d+)\)', r)
            if o.startswith('BRA') and m and labels.get(m.group(1), k) <= j and not wrapped:
                k, wrapped = labels[m.group(1)], True  # the next pass of the loop, from its top
                continue
            k += 1


def serialised_wgmma(ins):
    """The kernel's HGMMA count when every one of them (two or more) commits a group of its own
    (gsb0) and a warpgroup wait follows it before the next HGMMA, in program order; else 0. A
    pipelined kernel commits several HGMMA as one group (gsb0 on the last only)."""
    at = [j for j, (op, _, _) in enumerate(ins) if op.startswith('HGMMA')]
    if len(at) < 2 or not all('gsb0' in ins[j][1] for j in at):
        return 0
    ends = at[1:] + [len(ins)]
    waited = all(any(op.startswith('WARPGROUP.DEPBAR') for op, _, _ in ins[j + 1:end]) for j, end in zip(at, ends))
    return len(at) if waited else 0


def loops_of(ins, labels):
    for i, (op, rest, _) in enumerate(ins):
        m = re.search(r'`\((\.L_x_\d+)\)', rest)
        if op.startswith('BRA') and m and labels.get(m.group(1), i) < i:  # not a branch to itself
            yield ins[labels[m.group(1)]:i + 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('sass')
    ap.add_argument('pattern')
    ap.add_argument('--ops', default='HMMA,MUFU,SHFL,FMNMX,FADD,FMUL,LDSM,LDGSTS')
    ap.add_argument('--min-ops', default='', help='list only loops holding this opcode')
    ap.add_argument('--check-wgmma-a', action='store_true',
                    help='report HGMMA register A operands that their loop clobbers (exit status 1)')
    ap.add_argument('--check-wgmma-serial', action='store_true',
                    help='report kernels whose every HGMMA waits before the next (exit status 1)')
    a = ap.parse_args()
    ops = [o for o in a.ops.split(',') if o]
    found = False
    clobbers = serial = 0
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
                count = collections.Counter(op.split('.')[0] for op, _, _ in body)
                if a.min_ops and not count[a.min_ops]:
                    continue
                print(f'  loop: {len(body)} instructions; ' + ', '.join(f'{o} {count[o]}' for o in ops))
                if a.check_wgmma_a:
                    for addr, regs, w_addr, w_op in clobbered_wgmma_a(body):
                        clobbers += 1
                        print(f'    CLOBBERED in {name}: HGMMA at {addr} reads A from R{min(regs)}-R{max(regs)}, which the '
                              f'loop does not write before it but writes at {w_addr} ({w_op}): the next pass reads that value')
            if a.check_wgmma_a:
                for addr, regs, w_addr, w_op in written_in_flight(ins, labels):
                    clobbers += 1
                    print(f'    IN FLIGHT in {name}: HGMMA at {addr} reads A from R{min(regs)}-R{max(regs)}, written at '
                          f'{w_addr} ({w_op}) before the next warpgroup wait: the MMA may still be reading them')
            if a.check_wgmma_serial:
                n = serialised_wgmma(ins)
                if n:
                    serial += 1
                    print(f'    SERIALISED in {name}: each of its {n} HGMMA is a group of its own, waited for before the next')
    if not found:
        sys.exit(f'no kernel name contains {a.pattern!r}')
    if a.check_wgmma_a:
        print(f'wgmma A operands: {clobbers} clobbered')  # both kinds of finding
    if a.check_wgmma_serial:
        print(f'wgmma serialised: {serial} kernels')
    if clobbers or serial:
        sys.exit(1)


if __name__ == '__main__':
    main()
