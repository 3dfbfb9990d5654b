#!/usr/bin/env python3
"""README.md's measured numbers and command outputs, written from the files that hold them.

  python3 scripts/readme_tables.py --write [--exe build/sweeps/decode-bench]
  python3 scripts/readme_tables.py --check [--exe build/sweeps/decode-bench]

Regions of README.md, each between `<!-- generated:NAME begin -->` and `<!-- generated:NAME end -->`:
  headline  the headline table: chosen points of the pinned reference set (results/reference/h100:
            h100.json, peer.json, paper.json), each with its median, GB/s and fractions of its
            run's DRAM read ceiling and read floor, as the JSON records them
  ceilings  the pinned set's measured ceilings and read floor (results/reference/h100/ceilings.json)
  models    the models preset's decode-bench points (results/reference/h100/models.json) by model:
            head layout, points, their fractions of the read floor (least, most, how many at 0.90
            or more) and the plan families that ran them
  presets   the presets table, from configs/*.json
  backends  (only with --exe) the peer preset run with every backend
            (results/reference/h100/peer.json): `decode-bench show --by-backend`, each
            shape's median per backend and its time over the fastest's
  dry-run, capacity  (only with --exe) the first lines of `decode-bench sweep --dry-run` and
            `decode-bench capacity` (neither needs a GPU; run with CUDA_VISIBLE_DEVICES="" so the
            output is the same on a machine with a GPU)
  sweep-output  (only with --exe) `decode-bench show` of one experiment of the pinned quick run:
            the table a sweep prints at its end
--check also fails when the README names a repository path (results/, docs/, scripts/, configs/,
...) that does not exist. --write rewrites the regions; --check exits 1 with a diff when the
README and the files disagree, 2 on bad input. Plain python3: no matplotlib, no GPU.
"""
import argparse
import difflib
import json
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PINNED = "results/reference/h100"

# (label, file in PINNED, experiment, parameters that select exactly one point)
HEADLINE = [
    ("flash-decode, 1 head x 2M tokens, FP32", "h100.json", "single_head_long", {"dtype": "fp32"}),
    ("flash-decode, 1 head x 2M tokens, FP16", "h100.json", "single_head_long", {"dtype": "fp16"}),
    ("flash-decode, 32 heads x 64K, FP16, contiguous", "h100.json", "paged_vs_contiguous",
     {"layout": "contiguous"}),
    ("same, paged, 16-token pages shuffled over the pool", "h100.json", "paged_vs_contiguous",
     {"layout": "paged", "page_size": 16}),
    ("batched paged decode, 64 x 32 heads x 1K, FP16, page 16", "h100.json", "batched_paged",
     {"batch": 64, "T": 1024}),
    ("grouped-query 32 / 8 heads, 16 x 4K, FP16, contiguous", "peer.json", "gqa_32_8",
     {"dtype": "fp16", "batch": 16, "layout": "contiguous"}),
    ("FP8 E4M3 K/V, 32 heads x 64K, contiguous", "h100.json", "fp8_contiguous",
     {"dtype": "fp8_e4m3", "batch": 1}),
    ("shared prefix 8K, 256 sequences x 32 heads, suffix 128", "h100.json", "shared_prefix",
     {"kernel": "shared_prefix", "batch": 256, "prefix_len": 8192, "prefix_overlap": True}),
    ("same batch, batch decode over the same pages", "h100.json", "shared_prefix",
     {"kernel": "batch_decode", "batch": 256, "prefix_len": 8192}),
    ("3-kernel baseline, 1 head x 2M tokens, FP32", "paper.json", "kernel_only",
     {"kernel": "baseline", "T": 2097152}),
]
CEILINGS = [("dram_read", "DRAM read"), ("dram_copy", "DRAM copy"), ("l2_read", "L2 read"),
            ("l1_shared", "L1 / shared"), ("fp32_fma", "FP32 FMA"), ("fp16_fma", "FP16 FMA"),
            ("fp16_tensor", "FP16 tensor (mma.sync)"), ("fp16_tensor_wgmma", "FP16 tensor (wgmma)"),
            ("bf16_tensor_wgmma", "BF16 tensor (wgmma)"), ("fp8_e4m3_tensor_wgmma", "FP8 E4M3 tensor (wgmma)")]
MODELS_FLOOR = 0.90  # issue 34's bar for every models point
DRY_RUN_LINES, CAPACITY_SECTIONS = 8, 1
PATH_RE = re.compile(r"(?<![\w/.-])((?:results|docs|scripts|configs|plots|tests|kernels|pools|sweeps|harness|cmake|"
                     r"\.github)/[\w./<>*-]*[\w/])")


class BadInput(Exception):
    pass


def load(path):
    try:
        return json.loads((ROOT / path).read_text())
    except (OSError, ValueError) as e:
        raise BadInput(f"{path}: not a readable JSON document: {e}")


def run_of(doc, path):
    meta = doc.get("meta") or {}
    sha = str((meta.get("git") or {}).get("sha") or "unknown")
    if sha == "unknown":
        raise BadInput(f"{path}: meta.git.sha is unknown: the README cites only runs that name their commit")
    return sha[:7], (doc.get("device") or {}).get("name", "?")


def pick(doc, path, experiment, want):
    hits = [p for p in doc.get("points", [])
            if p.get("experiment") == experiment and p.get("status") == "ok"
            and all(p.get("parameters", {}).get(k) == v for k, v in want.items())
            # the headline is decode-bench's own kernels; a file may hold other backends' points too
            and p.get("parameters", {}).get("backend", "decode-bench") == want.get("backend", "decode-bench")]
    if len(hits) != 1:
        raise BadInput(f"{path}: experiment {experiment} with {want}: {len(hits)} ok points match, want exactly 1")
    return hits[0]


def fmt_time(us):
    return f"{us / 1000:.1f} ms" if us >= 10000 else f"{us:.1f} us"


def fmt_frac(x):
    return "-" if x is None else f"{x:.3f}"


def headline():
    docs, runs = {}, {}
    rows = ["| point | preset | median | GB/s | of DRAM read ceiling | of read floor |",
            "| --- | --- | ---: | ---: | ---: | ---: |"]
    for label, name, experiment, want in HEADLINE:
        path = f"{PINNED}/{name}"
        if path not in docs:
            docs[path] = load(path)
            runs[path] = run_of(docs[path], path)
        p = pick(docs[path], path, experiment, want)
        a = p.get("achieved") or {}
        rows.append(f"| {label} | {docs[path]['meta'].get('preset', '?')} | {fmt_time(p['timing']['median_us'])} | "
                    f"{a.get('gbps', 0):.0f} | {fmt_frac(a.get('fraction_of_dram_read'))} | "
                    f"{fmt_frac(a.get('fraction_of_read_floor'))} |")
    devices = sorted({dev for _, dev in runs.values()})
    sources = ", ".join(f"`{path}` ({sha})" for path, (sha, _) in runs.items())
    intro = (f"{' / '.join(devices)}; from {sources}. Cold L2, CUDA-event median; every point verified "
             "against the float64 reference before it was timed. GB/s counts the traffic model's minimum "
             "bytes (K, V, q, o, page table; the prefix once for the shared prefix); the fractions are "
             "of the same run's measured ceilings (\"-\": that run measured no read floor).")
    return intro + "\n\n" + "\n".join(rows)


def ceilings():
    path = f"{PINNED}/ceilings.json"
    doc = load(path)
    sha, device = run_of(doc, path)
    c = doc.get("ceilings") or {}
    parts = []
    for key, label in CEILINGS:
        if isinstance(c.get(key), dict):
            parts.append(f"{label} {c[key]['value']:.0f} {c[key].get('unit', '')}".rstrip())
    if not parts:
        raise BadInput(f"{path}: no ceilings")
    text = f"Measured ceilings, {device} (`{path}`, {sha}): " + ", ".join(parts) + "."
    floor = ((c.get("dram_read") or {}).get("floor") or {}).get("samples") or []
    if floor:
        mib = [(s["bytes"] / 2**20, s["median_us"]) for s in sorted(floor, key=lambda s: s["bytes"])]
        text += (" Read floor (the read ceiling's kernels over exactly B bytes, cold, median): "
                 + ", ".join(f"{m:g} MiB {us:.2f} us" for m, us in mib) + ".")
    return text


def models():
    path = f"{PINNED}/models.json"
    doc = load(path)
    sha, device = run_of(doc, path)
    groups = {}
    for p in doc.get("points", []):
        q = p.get("parameters") or {}
        if q.get("backend", "decode-bench") != "decode-bench" or p.get("status") != "ok":
            continue
        frac = (p.get("achieved") or {}).get("fraction_of_read_floor")
        if frac is None:
            raise BadInput(f"{path}: {p.get('id')}: no achieved.fraction_of_read_floor (a run without the read floor)")
        g = groups.setdefault(p.get("experiment"), {"q": q, "fracs": [], "families": [], "heads_q": []})
        g["fracs"].append(frac)
        if q.get("heads_q") not in g["heads_q"]:
            g["heads_q"].append(q.get("heads_q"))
        family = (p.get("plan") or {}).get("family", "?")
        if family not in g["families"]:
            g["families"].append(family)
    if not groups:
        raise BadInput(f"{path}: no verified decode-bench point")
    rows = ["| model | heads (q / KV, head dim) | dtype | points | of read floor, least - most | at 0.90 or more | plan families |",
            "| --- | --- | --- | ---: | ---: | ---: | --- |"]
    total = reached = 0
    for name, g in groups.items():
        q, fracs = g["q"], g["fracs"]
        heads_q = " and ".join(str(h) for h in sorted(g["heads_q"]))
        heads = (f"MLA: {heads_q} / latent {q.get('kv_lora_rank')} + rope {q.get('rope_dim')}"
                 if q.get("attention") == "mla" else f"{heads_q} / {q.get('heads_kv')}, {q.get('head_dim')}")
        at = sum(f >= MODELS_FLOOR for f in fracs)
        total, reached = total + len(fracs), reached + at
        rows.append(f"| `{name}` | {heads} | {q.get('dtype')} | {len(fracs)} | {min(fracs):.3f} - {max(fracs):.3f} | "
                    f"{at} | {', '.join(g['families'])} |")
    intro = (f"{device}; `{path}` ({sha}): decode-bench's points of the models preset (batch x context 1 x 32K, "
             "16 x 4K, 64 x 1K, 128 x 512, contiguous and paged; the MLA models at their own shapes), each verified. "
             "Fraction of the read floor: the time the read ceiling's kernels take over the point's minimum bytes, "
             f"over the point's time. {reached} of {total} points reach {MODELS_FLOOR:.2f}.")
    return intro + "\n\n" + "\n".join(rows)


def presets():
    rows = ["| preset | what | experiments |", "| --- | --- | --- |"]
    for f in sorted((ROOT / "configs").glob("*.json")):
        doc = load(f.relative_to(ROOT))
        names = ", ".join(f"`{e['name']}`" for e in doc.get("experiments", []))
        rows.append(f"| `{f.stem}` | {doc.get('description', '').replace('|', '/')} | {names} |")
    return "\n".join(rows)


def command_output(exe, args, keep, fenced=True):
    try:
        # No GPU visible: the README quotes what these print on any machine (a GPU adds columns).
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        res = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    except OSError as e:
        raise BadInput(f"--exe {exe}: cannot run: {e}")
    if res.returncode != 0:
        raise BadInput(f"`decode-bench {' '.join(args)}` exited {res.returncode}: {res.stderr.strip()}")
    lines = [ln.rstrip() for ln in res.stdout.splitlines()]
    shown = keep(lines)
    if shown != lines:
        shown = shown + ["..."]
    if not fenced:  # markdown the command printed itself: rendered as it is
        return "\n".join(shown)
    return "```\n$ decode-bench " + " ".join(args) + "\n" + "\n".join(shown) + "\n```"


def first_sections(lines, n=CAPACITY_SECTIONS):
    """The lines up to the (n + 1)-th `[section]` header, trailing blank lines dropped."""
    out, seen = [], 0
    for ln in lines:
        if ln.startswith("["):
            seen += 1
            if seen > n:
                break
        out.append(ln)
    while out and not out[-1]:
        out.pop()
    return out


# The peer preset's experiments the README shows side by side (the models experiment and the
# ragged batch are in the file and its figures).
BACKEND_EXPERIMENTS = ("gqa_32_8", "short", "long_mha", "fp8", "shared_prefix")


def backends(exe):
    path = f"{PINNED}/peer.json"
    doc = load(path)
    sha, device = run_of(doc, path)
    selection = [a for e in BACKEND_EXPERIMENTS for a in ("--experiment", e)]
    shown = " ".join(selection)
    intro = (f"{device}; `{path}` ({sha}): the peer preset, every backend in one call. Median time per backend, "
             "each point verified against the float64 reference first; `/ fastest` = the backend's time over the "
             "fastest one's (1.00: the fastest), and a backend that skipped a shape shows `skipped` (the reasons: "
             f"`decode-bench show {path} --format markdown`; grouped bars: "
             f"`{PINNED}/figures/peer/backends_median_by_shape.png`). Written by "
             f"`decode-bench show {path} --by-backend {shown} --format markdown`:")
    return intro + "\n\n" + command_output(exe, ["show", path, "--by-backend", *selection, "--format", "markdown"],
                                              lambda ls: ls, fenced=False)


def regions(exe):
    out = {"headline": headline(), "ceilings": ceilings(), "models": models(), "presets": presets()}
    if exe:
        out["backends"] = backends(exe)
        out["dry-run"] = command_output(exe, ["sweep", "--dry-run"], lambda ls: ls[:DRY_RUN_LINES])
        out["capacity"] = command_output(exe, ["capacity"], first_sections)
        out["sweep-output"] = command_output(exe, ["show", f"{PINNED}/quick.json", "--experiment", "fp8"],
                                             lambda ls: ls)
    return out


def rewrite(text, name, body):
    begin, end = f"<!-- generated:{name} begin -->", f"<!-- generated:{name} end -->"
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise BadInput(f"README.md: needs one {begin} ... {end} region")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def missing_paths(text):
    missing = []
    for m in PATH_RE.finditer(text):
        path = m.group(1).rstrip(".")
        if any(ch in path for ch in "<>*"):
            path = path.split("<")[0].split("*")[0].rsplit("/", 1)[0]  # a pattern: its folder must exist
        if not (ROOT / path).exists():
            missing.append(m.group(1))
    return sorted(set(missing))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    ap.add_argument("--exe", help="decode-bench binary: also write / check the dry-run and capacity outputs")
    args = ap.parse_args()
    text = README.read_text()
    try:
        new = text
        for name, body in regions(args.exe).items():
            new = rewrite(new, name, body)
    except BadInput as e:
        print(f"readme_tables: {e}", file=sys.stderr)
        return 2
    if args.write:
        if new != text:
            README.write_text(new)
        return 0
    status = 0
    if new != text:
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                   "README.md (committed)", "README.md (from the files)"))
        print("readme_tables: README.md disagrees with the files it quotes; run "
              "python3 scripts/readme_tables.py --write" + (f" --exe {args.exe}" if args.exe else ""),
              file=sys.stderr)
        status = 1
    for path in missing_paths(text):
        print(f"readme_tables: README.md names {path}, which the repository does not hold", file=sys.stderr)
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
