#!/usr/bin/env bash
# Counts the SASS instructions of one K/V tile's staging (kernels/tuning/staging_sass.cu) for paged
# FP16 rows (resolved once per warp, and in every lane as before) and contiguous rows, per loop of
# each kernel (scripts/sass_loops.py): the outer loop is one tile; the staging's own inner loop (8
# passes unrolled by 4), where there is one, runs twice per tile. Needs nvcc and nvdisasm (the CUDA
# toolkit's, or the one in the PyPI wheel nvidia-cuda-nvdisasm: NVDISASM=path).
#   scripts/staging_sass.sh
set -euo pipefail
tree=$(cd "$(dirname "$0")/.." && pwd)
nvcc=${NVCC:-nvcc}
nvdisasm=${NVDISASM:-nvdisasm}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$nvcc" -I"$tree" -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -gencode arch=compute_90,code=sm_90 -cubin \
  "$tree/kernels/tuning/staging_sass.cu" -o "$work/staging.cubin"
"$nvdisasm" "$work/staging.cubin" > "$work/staging.sass"
for kernel in "PagedKVI6__halfEELb1" "PagedKVI6__halfEELb0" "ContiguousKVI6__halfEELb0"; do
  python3 "$tree/scripts/sass_loops.py" "$work/staging.sass" "$kernel" --ops LDGSTS,SHFL,LDG
done
