#!/usr/bin/env python3
"""Writes the SYNTHETIC plotting fixtures next to this script. Every number comes from the toy
formulas below, not from a GPU: the files exist only to test plotting and comparing mechanics.

    /usr/bin/python3 tests/data/make_synthetic_fixtures.py
"""
import copy
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
D = 128
DRAM = 2000.0  # toy GB/s

META = {"tool": "decode-bench", "tool_version": "0.0.0-synthetic", "git": {"sha": "synthetic", "dirty": False},
        "argv": ["make_synthetic_fixtures.py"], "command": "tests/data/make_synthetic_fixtures.py",
        "timestamp": "2000-01-01T00:00:00Z", "preset": "paper", "synthetic": True,
        "note": "SYNTHETIC test fixture: toy formulas, never measured; for plotting tests only"}
DEVICE = {"name": "Synthetic GPU (test fixture)", "compute_capability": "9.0", "sm_count": 100,
          "l2_bytes": 50 * 2**20, "memory_bytes": 80 * 2**30, "sm_clock_khz": 1500000,
          "memory_clock_khz": 2600000, "driver_version": 13000, "runtime_version": 13000}
CEILINGS = {
    "dram_read": {"value": DRAM, "unit": "GB/s", "kernel": "synthetic", "config": {}},
    "dram_copy": {"value": 1800.0, "unit": "GB/s", "kernel": "synthetic", "config": {}},
    "l2_read": {"value": 6000.0, "unit": "GB/s", "kernel": "synthetic", "config": {}},
    "l1_shared": {"value": 20000.0, "unit": "GB/s", "kernel": "synthetic", "config": {}},
    "fp32_fma": {"value": 50.0, "unit": "TFLOP/s", "kernel": "synthetic", "config": {}},
    "fp16_fma": {"value": 100.0, "unit": "TFLOP/s", "kernel": "synthetic", "config": {}},
    "fp16_tensor": {"value": 800.0, "unit": "TFLOP/s", "kernel": "synthetic", "config": {}},
}


def point(exp, params, efficiency, with_counters=False):
    t, batch = params.get("T", 512), params.get("batch", 1)
    model_bytes = float(2 * t * D * 4 * batch + 2 * D * 4 * batch)
    model_flops = float(4 * t * D * batch)
    gbps = DRAM * efficiency
    us = model_bytes / gbps / 1e3
    full = {"kernel": "flash_decode", "layout": "contiguous", "dtype": "fp32", "heads_q": 1, "heads_kv": 1,
            "head_dim": D, "T": t, "batch": batch, "timing": "cold", "end_to_end": False}
    full.update(params)
    pid = exp + "/" + ",".join(f"{k}={v}" for k, v in sorted(full.items()))
    p = {"id": pid, "experiment": exp, "parameters": full, "status": "ok",
         "verification": {"passed": True, "max_abs_error": 1e-7, "max_rel_error": 1e-6, "tolerance": 1e-4},
         "timing": {"median_us": us, "repetitions": 10},
         "model": {"bytes": model_bytes, "flops": model_flops},
         "achieved": {"gbps": gbps, "fraction_of_dram_read": efficiency}}
    if with_counters:
        dram = model_bytes * 1.02
        fp32 = model_flops
        p["counters"] = {"available": True, "duration_ns": us * 1e3, "flops": fp32, "fp32_flops": fp32,
                         "achieved_tflops": fp32 / (us * 1e3) / 1e3,
                         "levels": {lvl: {"bytes": dram * k, "gbps": dram * k / (us * 1e3),
                                          "arithmetic_intensity": fp32 / (dram * k), "measured_over_model": 1.02 * k}
                                    for lvl, k in (("dram", 1.0), ("l2", 1.3), ("l1", 1.6))}}
    return p


def shared_prefix_points():
    """Toy cascade pairs: batch decode moves the prefix once per sequence, shared_prefix once."""
    pts = []
    heads, s_len = 32, 128
    row = 2 * heads * D * 2  # K + V bytes of one token, fp16
    for n in (16, 64, 256):
        for prefix in (1024, 8192, 32768):
            unique = (prefix + n * s_len) * row
            flops = float(4 * (prefix + s_len) * D * heads * n)
            prefix_flops = float(4 * prefix * D * heads * n)
            bound_us = max(unique / DRAM / 1e3, prefix_flops / (CEILINGS["fp16_tensor"]["value"] * 1e6))
            for kernel, us in (("batch_decode", (prefix + s_len) * n * row / (3 * DRAM) / 1e3),
                               ("shared_prefix", 1.3 * bound_us)):
                params = {"kernel": kernel, "layout": "paged", "dtype": "fp16", "heads_q": heads, "heads_kv": heads,
                          "head_dim": D, "batch": n, "prefix_len": prefix, "suffix_len": s_len, "T": prefix + s_len,
                          "page_size": 16, "timing": "cold"}
                if kernel == "shared_prefix":
                    params["prefix_overlap"] = True
                p = {"id": "shared_prefix/" + ",".join(f"{k}={v}" for k, v in sorted(params.items())),
                     "experiment": "shared_prefix", "parameters": params, "status": "ok",
                     "verification": {"passed": True, "max_abs_error": 1e-5, "max_rel_error": 1e-4, "tolerance": 1e-3},
                     "timing": {"median_us": us, "repetitions": 10},
                     "model": {"bytes": float(unique), "flops": flops},
                     "achieved": {"gbps": unique / (us * 1e3)},
                     "bound": {"unique_kv_bytes": float(unique), "prefix_flops": prefix_flops, "bound_us": bound_us,
                               "median_over_bound": us / bound_us}}
                pts.append(p)
    return pts


def paper():
    pts = []
    for blocks in (16, 64, 128, 256, 1024):
        for e in range(12, 22, 3):
            t = 2**e
            eff = min(0.9, 0.1 + 0.8 * (t / 2**21) ** 0.3) * min(1.0, blocks / 128) * (0.9 if blocks > 256 else 1)
            pts.append(point("fig1_blocks", {"T": t, "blocks": blocks}, eff, with_counters=blocks == 128))
    for e in range(12, 22, 3):
        t = 2**e
        pts.append(point("fig3_kernels", {"T": t, "kernel": "baseline"}, 0.05 / (1 + e / 20)))
        pts.append(point("fig3_kernels", {"T": t, "kernel": "flash_decode", "blocks": 128}, 0.3 + 0.03 * e))
        for kernel, eff in (("cpu_reference", 0.002), ("baseline", 0.01), ("flash_decode", 0.015)):
            pts.append(point("fig4_e2e", {"T": t, "kernel": kernel, "end_to_end": True}, eff))
    for page in (16, 32, 64, 128, 256, 512):
        pts.append(point("fig6_page_size", {"T": 512, "batch": 64, "layout": "paged", "page_size": page,
                                            "page_order": "shuffled"}, 0.6 if page < 512 else 0.95))
    pts.append(point("fig6_page_size", {"T": 512, "batch": 64}, 0.97))
    pts += shared_prefix_points()
    pts.append({"id": "fig6_page_size/skipped-example", "experiment": "fig6_page_size",
                "parameters": {"kernel": "flash_decode", "layout": "paged", "page_size": 4096}, "status": "skipped",
                "reason": "synthetic: page larger than the sequence"})
    return {"schema_version": "1.0", "meta": META, "device": DEVICE, "ceilings": CEILINGS, "points": pts}


def capacity():
    pts = []
    budget = 4 * 2**30
    per_token = 2 * D * 4
    for max_len in (512, 1024, 2048, 4096):
        for layout, page in (("contiguous", 0), ("paged", 16)):
            reserved = max_len * per_token if layout == "contiguous" else 512 * per_token
            seqs = budget // reserved
            pts.append({"id": f"capacity/{layout}/{max_len}", "experiment": "fig5_capacity",
                        "parameters": {"max_seq_len": max_len, "page_size": page, "layout": layout}, "status": "ok",
                        "capacity": {"sequences": seqs, "bytes_reserved": seqs * reserved,
                                     "bytes_used": seqs * 512 * per_token,
                                     "fragmentation": 1 - 512 * per_token / reserved}})
    meta = dict(META, preset="capacity")
    return {"schema_version": "1.0", "meta": meta, "device": DEVICE, "ceilings": {}, "points": pts}


def _with_samples(p, rng, slowdown=1.0, cv=0.01, n=10):
    """Gives an ok point `n` timing samples around its median times `slowdown`, with relative
    spread `cv` (uniform noise of that standard deviation), and recomputes the derived numbers."""
    median = p["timing"]["median_us"] * slowdown
    half = cv * 3 ** 0.5  # a uniform on [-h, h] has standard deviation h / sqrt(3)
    samples = sorted(median * (1 + rng.uniform(-half, half)) for _ in range(n))
    mid = samples[n // 2] if n % 2 else 0.5 * (samples[n // 2 - 1] + samples[n // 2])
    p["timing"] = {"median_us": mid, "repetitions": n, "samples_us": samples, "mode": "hot", "method": "events"}
    p["achieved"]["gbps"] = p["model"]["bytes"] / (mid * 1e3)
    p["achieved"]["tflops"] = p["model"]["flops"] / (mid * 1e6)
    return p


GATE_SHAPES = (("kernels", {"T": 4096, "blocks": 64}, 0.7), ("kernels", {"T": 4096, "kernel": "baseline"}, 0.05),
               ("kernels", {"T": 65536, "blocks": 128}, 0.85),
               ("paged", {"T": 4096, "batch": 4, "layout": "paged", "page_size": 16}, 0.6),
               ("paged", {"T": 4096, "batch": 4, "layout": "paged", "page_size": 16, "kernel": "batch_decode"}, 0.65),
               ("shared_prefix", {"T": 1152, "batch": 8, "layout": "paged", "page_size": 16,
                                  "kernel": "shared_prefix"}, 0.5))


def gate(seed, slow=None, slowdown=1.0, device_scale=1.0, name=None):
    """ci-smoke-like fixtures for tests/perf_gate_check.sh: every point has 10 samples with 1%
    noise. `slow` (an experiment) is slowed by `slowdown`; `device_scale` scales every ceiling and
    speed as a faster or slower GPU of the same kernel quality would."""
    rng = random.Random(seed)
    ceilings = copy.deepcopy(CEILINGS)
    for c in ceilings.values():
        c["value"] *= device_scale
    pts = []
    for exp, params, eff in GATE_SHAPES:
        p = point(exp, params, eff)
        p["timing"]["median_us"] /= device_scale
        _with_samples(p, rng, slowdown if exp == slow else 1.0)
        p["achieved"]["fraction_of_dram_read"] = p["achieved"]["gbps"] / ceilings["dram_read"]["value"]
        pts.append(p)
    # Provenance as a sweep on a GPU records it (docs/results.md); toy values.
    state = {"source": "nvml", "time": "2000-01-01T00:00:00Z", "sm_clock_mhz": 1500, "memory_clock_mhz": 2600,
             "temperature_c": 40, "power_w": 100.0, "throttle_reasons": 0, "driver_version": "0.0-synthetic"}
    meta = dict(META, preset="ci-smoke", environment={},
                build={"type": "Release", "cuda_architectures": "90", "cuda_compiler_version": "0.0-synthetic",
                       "cxx_compiler": "synthetic"},
                gpu_state={"start": state, "end": dict(state, temperature_c=55)})
    device = dict(DEVICE, name=name or DEVICE["name"])
    return {"schema_version": "1.1", "meta": meta, "device": device, "ceilings": ceilings, "points": pts}


GATE_FIXTURES = {
    "gate_baseline.json": lambda: gate(1),
    # Same code, another run: new noise draws (1% spread), no change in the medians' expectation.
    "gate_noise.json": lambda: gate(2),
    # A planted 10% slowdown of the kernels experiment.
    "gate_regressed.json": lambda: gate(3, slow="kernels", slowdown=1.10),
    # A GPU with 0.6x every ceiling and the same fraction of them: slower in absolute terms,
    # identical once normalised by ceilings.
    "gate_other_gpu.json": lambda: gate(4, device_scale=0.6, name="Synthetic GPU B (test fixture, 0.6x ceilings)"),
}


def backends():
    """One run through two backends (the `backend` axis), ids as a sweep writes them: the default
    backend's without a backend component, the other's with `backend=flashinfer` after the kernel.
    flashinfer is 10% slower on `kernels` and 10% faster on `paged`; it skips bf16 (as it does for
    want of a build), decode-bench fails verification on one shape, and one shape has no flashinfer
    point at all."""
    rng = random.Random(5)
    shapes = [("kernels", {"kernel": "flash_decode", "layout": "contiguous", "dtype": dtype, "T": t}, 0.8)
              for dtype in ("fp16", "bf16") for t in (4096, 65536)]
    shapes += [("paged", {"kernel": "batch_decode", "layout": "paged", "dtype": "fp16", "batch": b, "T": 4096,
                          "page_size": 16}, 0.6) for b in (4, 16)]
    pts = []
    for backend in ("decode-bench", "flashinfer"):
        for exp, params, eff in shapes:
            if backend == "flashinfer" and params.get("batch") == 16:
                continue  # a shape only decode-bench ran
            p = point(exp, dict(params, backend=backend), eff)
            keys = ["kernel"] + (["backend"] if backend != "decode-bench" else []) + ["layout", "dtype", "batch", "T",
                                                                                    "page_size"]
            p["id"] = exp + "/" + "/".join(f"{k}={p['parameters'][k]}" for k in keys if k in p["parameters"])
            slowdown = 1.0 if backend == "decode-bench" else 1.1 if exp == "kernels" else 0.9
            _with_samples(p, rng, slowdown)
            if backend == "flashinfer" and params["dtype"] == "bf16":
                p = {k: p[k] for k in ("id", "experiment", "parameters")}
                p.update(status="skipped", reason="synthetic: flashinfer built without bf16")
            elif backend == "decode-bench" and params["dtype"] == "bf16" and params["T"] == 65536:
                p = {k: p[k] for k in ("id", "experiment", "parameters", "verification", "model")}
                p["verification"]["passed"] = False
                p.update(status="verification_failed", reason="synthetic: output beyond the tolerance")
            pts.append(p)
    meta = dict(META, preset="peer", command="tests/data/make_synthetic_fixtures.py (two backends)")
    return {"schema_version": "1.1", "meta": meta, "device": DEVICE, "ceilings": CEILINGS, "points": pts}


if __name__ == "__main__":
    for name, make in GATE_FIXTURES.items():
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
            json.dump(make(), f, indent=1)
            f.write("\n")
    for name, doc in (("synthetic_paper_results.json", paper()), ("synthetic_capacity_results.json", capacity()),
                      ("synthetic_backends_results.json", backends())):
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
