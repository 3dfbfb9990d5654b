#!/usr/bin/env python3
"""The MLA points of a results file as docs/kernels/mla.md tabulates them: per (batch x T, h_q x
q_len), decode-bench's kernel, time, fraction of the run's DRAM read ceiling and of its BF16 (or
FP16) warpgroup-MMA roof, the side of the ridge the model's intensity puts it on, and each other
backend's time over decode-bench's.

  scripts/mla_table.py RESULTS.json

Reads only the file: `achieved` and `model` of each point, `ceilings` of the run.
"""
import json
import sys


def shape_label(batch, tokens):
    t = f"{tokens // 1024}K" if tokens % 1024 == 0 else str(tokens)
    return f"{batch} x {t}"


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: scripts/mla_table.py RESULTS.json")
    try:
        with open(argv[1]) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"mla_table: cannot read {argv[1]}: {e}")
    ceilings = doc.get("ceilings") or {}
    try:
        dram = float(ceilings["dram_read"]["value"])  # GB/s
    except (KeyError, TypeError, ValueError):
        sys.exit("mla_table: the file has no ceilings.dram_read.value")
    rows = {}
    others = []
    for p in doc.get("points", []):
        par = p.get("parameters", {})
        if par.get("attention") != "mla" or "timing" not in p or p.get("status", "ok") != "ok":
            continue
        key = (par["batch"], par["T"], par["heads_q"], par.get("q_len", 1))
        backend = par.get("backend", "decode-bench")
        rows.setdefault(key, {})[backend] = p
        if backend != "decode-bench" and backend not in others:
            others.append(backend)
    head = ["shape", "h_q x q_len", "kernel", "us", "of DRAM read", "of wgmma roof", "side"]
    for b in others:
        head += [f"{b} us", f"{b} / decode-bench"]
    print("| " + " | ".join(head) + " |")
    print("| " + " | ".join(["---"] * len(head)) + " |")
    for key in rows:  # the file's order: the preset's experiments, then h_q, then q_len
        own = rows[key].get("decode-bench")
        if own is None:
            continue
        a, m = own["achieved"], own["model"]
        roof_name = a.get("tensor_roof")
        roof = float(ceilings[roof_name]["value"]) if roof_name in ceilings else None  # TFLOP/s
        ridge = roof * 1e3 / dram if roof else None  # FLOP a byte
        side = "-" if ridge is None else ("compute" if m["arithmetic_intensity"] >= ridge else "memory")
        us = own["timing"]["median_us"]
        cells = [shape_label(key[0], key[1]), f"{key[2]} x {key[3]}", own["plan"].get("kernel", "-").replace("mla_decode_", ""),
                 f"{us:.1f}", f"{a['fraction_of_dram_read']:.3f}", f"{a.get('fraction_of_tensor_roof', 0):.3f}", side]
        for b in others:
            q = rows[key].get(b)
            cells += [f"{q['timing']['median_us']:.1f}", f"{q['timing']['median_us'] / us:.2f}"] if q else ["-", "-"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv)
