#!/usr/bin/env bash
# Counts the SASS instructions of one K/V tile's staging (kernels/tuning/staging_sass.cu) for paged
# FP16 rows (resolved once per warp, and in every lane as before) and contiguous rows, per loop of
# each kernel: a loop body's instructions and cp.async count. The staging's own inner loop (8 passes
# unrolled by 4) runs twice per tile; the outer loop is one tile. Needs nvcc and
# nvdisasm (the CUDA toolkit's, or the PyPI wheel nvidia-cuda-nvdisasm: NVDISASM=path).
#   scripts/staging_sass.sh [tree]   (default: this checkout)
set -euo pipefail
tree=${1:-$(cd "$(dirname "$0")/.." && pwd)}
nvcc=${NVCC:-nvcc}
nvdisasm=${NVDISASM:-nvdisasm}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$nvcc" -I"$tree" -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -gencode arch=compute_90,code=sm_90 -cubin \
  "$tree/kernels/tuning/staging_sass.cu" -o "$work/staging.cubin"
"$nvdisasm" "$work/staging.cubin" > "$work/staging.sass"
python3 - "$work/staging.sass" <<'PY'
import re, sys
kernels, cur = {}, None
for line in open(sys.argv[1]):
    m = re.match(r'^\.text\.(\S+):', line)
    if m:
        sym = m.group(1)
        cur = ('paged rows, ' + ('resolved once per warp' if 'ELb1E' in sym else 'resolved in every lane')
               if 'PagedKV' in sym else 'contiguous rows')
        kernels[cur] = []
        continue
    if cur is None:
        continue
    m = re.match(r'^(\.L_x_\d+):', line)
    if m:
        kernels[cur].append(('label', m.group(1)))
        continue
    m = re.search(r'/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)(.*)', line)
    if m:
        kernels[cur].append(('insn', m.group(1), m.group(2)))
for name, items in kernels.items():
    pos, labels = 0, {}
    insns = []
    for it in items:
        if it[0] == 'label':
            labels[it[1]] = len(insns)
        else:
            insns.append(it)
    print(f'{name}: {len(insns)} instructions')
    # A loop: a branch back to a label at or before it.
    for i, (_, op, rest) in enumerate(insns):
        m = re.search(r'`\((\.L_x_\d+)\)', rest)
        if op.startswith('BRA') and m and labels.get(m.group(1), i + 1) < i:  # not the final self-branch
            body = insns[labels[m.group(1)]:i + 1]
            ldgsts = sum(1 for b in body if b[1].startswith('LDGSTS'))
            print(f'  loop {m.group(1)}: {len(body)} instructions, {ldgsts} LDGSTS (cp.async)')
PY
