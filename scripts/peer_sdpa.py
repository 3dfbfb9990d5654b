#!/usr/bin/env python3
"""PyTorch scaled_dot_product_attention as a peer, timed the way decode-bench times its kernels.

One query token per sequence and query head over B sequences of T cached tokens (K, V: (B, H_kv, T,
D)), grouped heads through enable_gqa=True. Cold L2: 256 MiB are written before each timed call;
CUDA events around the call only; median of --reps after --warmup calls. Bandwidth is K + V bytes
over the median (the same K and V bytes kernels/traffic_model.hpp counts), so it compares with
decode-bench's `achieved.gbps` up to the q/o bytes (< 0.1% at these shapes).

  python3 scripts/peer_sdpa.py --out peer.json [--reps 30] [--shapes all|gqa|short|...]

Writes a JSON document {meta, points[]}; each point names the shape with the same parameter names
as decode-bench (batch, T, heads_q, heads_kv, head_dim, dtype) so scripts/peer_table.py can join
them with a sweep's points.
"""
import argparse
import json
import statistics
import sys

import torch
import torch.nn.functional as F

# (name, batch, T, heads_q, heads_kv, head_dim, dtypes)
SHAPES = {
    "gqa": [
        ("gqa_32_8_1x64K", 1, 65536, 32, 8, 128, ("fp16", "bf16")),
        ("gqa_32_8_16x4K", 16, 4096, 32, 8, 128, ("fp16", "bf16")),
        ("gqa_32_8_64x1K", 64, 1024, 32, 8, 128, ("fp16", "bf16")),
    ],
    "short": [
        ("mha_64x32", 64, 32, 32, 32, 128, ("fp16",)),
        ("mha_64x256", 64, 256, 32, 32, 128, ("fp16",)),
        ("one_head_32x8K", 32, 8192, 1, 1, 128, ("fp16",)),
    ],
    "long": [
        ("mha_1x64K", 1, 65536, 32, 32, 128, ("fp16",)),
        ("mha_16x4K", 16, 4096, 32, 32, 128, ("fp16",)),
        ("mha_64x1K", 64, 1024, 32, 32, 128, ("fp16",)),
    ],
    "models": [
        ("llama3_70b_16x4K", 16, 4096, 64, 8, 128, ("fp16",)),
        ("qwen25_7b_16x4K", 16, 4096, 28, 4, 128, ("fp16",)),
        ("phi3_mini_16x4K", 16, 4096, 32, 32, 96, ("fp16",)),
        ("gemma_7b_16x4K", 16, 4096, 16, 16, 256, ("fp16",)),
    ],
}
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def time_cold(fn, reps, warmup, flush):
    for _ in range(warmup):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(reps):
        flush.add_(1)  # write 256 MiB: evicts K/V from the 50 MB L2
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) * 1e3)  # us
    return samples


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--shapes", default="all", help="comma list of: " + ", ".join(SHAPES) + ", or all")
    args = ap.parse_args()
    groups = list(SHAPES) if args.shapes == "all" else args.shapes.split(",")
    unknown = [g for g in groups if g not in SHAPES]
    if unknown:
        sys.exit(f"--shapes: unknown group(s) {unknown}; known: {list(SHAPES)}")
    dev = torch.device("cuda")
    flush = torch.empty(256 * 2**20 // 4, dtype=torch.float32, device=dev)
    points = []
    for group in groups:
        for name, b, t, hq, hkv, d, dtypes in SHAPES[group]:
            for dt in dtypes:
                torch.manual_seed(0)
                q = torch.randn(b, hq, 1, d, device=dev, dtype=DTYPES[dt])
                k = torch.rand(b, hkv, t, d, device=dev, dtype=DTYPES[dt]) * 2 - 1
                v = torch.rand(b, hkv, t, d, device=dev, dtype=DTYPES[dt]) * 2 - 1
                fn = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=hq != hkv)
                samples = time_cold(fn, args.reps, args.warmup, flush)
                kv_bytes = 2 * k.numel() * k.element_size()
                med = statistics.median(samples)
                points.append({"name": name, "batch": b, "T": t, "heads_q": hq, "heads_kv": hkv, "head_dim": d,
                               "dtype": dt, "median_us": med, "min_us": min(samples), "max_us": max(samples),
                               "kv_bytes": kv_bytes, "gbps": kv_bytes / (med * 1e3), "reps": len(samples)})
                print(f"{name:22s} {dt:5s} {med:9.1f} us {kv_bytes / (med * 1e3):7.0f} GB/s", flush=True)
                del q, k, v
                torch.cuda.empty_cache()
    meta = {"peer": "torch.nn.functional.scaled_dot_product_attention", "torch": torch.__version__,
            "device": torch.cuda.get_device_name(0), "timing": "cold L2 (256 MiB written before each call), "
            "CUDA events around the call, median", "command": " ".join(["python3"] + sys.argv)}
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "points": points}, f, indent=1)


if __name__ == "__main__":
    main()
