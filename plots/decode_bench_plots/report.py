"""A markdown report per run: device, ceilings, figures, headline numbers, skipped figures."""
import os
from collections import defaultdict

from .load import ceiling, experiment, gbps, ok_points, param
from .shared_prefix_figures import shared_prefix_table


def _headlines(doc):
    dram = ceiling(doc, "dram_read")
    best = {}
    for p in ok_points(doc):
        if "capacity" in p:
            continue
        exp = experiment(p)
        if exp not in best or gbps(p) > gbps(best[exp]):
            best[exp] = p
    rows = []
    for exp, p in sorted(best.items()):
        frac = f"{100 * gbps(p) / dram:.1f}%" if dram else "n/a"
        of_floor = p.get("achieved", {}).get("fraction_of_read_floor")
        floor = f"{100 * of_floor:.1f}%" if isinstance(of_floor, (int, float)) else "n/a"
        shape = ", ".join(f"{k}={param(p, k)}" for k in ("kernel", "layout", "dtype", "T", "batch", "blocks", "page_size")
                          if param(p, k) is not None)
        rows.append(f"| {exp} | {gbps(p):.1f} | {frac} | {floor} | {p['timing']['median_us']:.2f} | {shape} |")
    return rows


def _read_floor(doc):
    """Rows of the read floor (ceilings.dram_read.floor, harness/read_floor.hpp), or [] when absent."""
    read = doc["ceilings"].get("dram_read") or {}
    samples = (read.get("floor") or {}).get("samples") or []
    rows = []
    for s in samples:
        rate = s["bytes"] / s["median_us"] / 1e3
        rows.append(f"| {s['bytes'] / 1048576:.0f} MiB | {s['median_us']:.2f} | {rate:.1f} | {rate / read['value']:.3f} |")
    return rows


def _snapshot(s):
    if not isinstance(s, dict):
        return "?"
    parts = [f"SM {s['sm_clock_mhz']} MHz" if "sm_clock_mhz" in s else None,
             f"memory {s['memory_clock_mhz']} MHz" if "memory_clock_mhz" in s else None,
             f"{s['temperature_c']} C" if "temperature_c" in s else None,
             f"{s['power_w']:.0f} W" if isinstance(s.get("power_w"), (int, float)) else None,
             f"throttle reasons 0x{s['throttle_reasons']:x}" if isinstance(s.get("throttle_reasons"), int) else None]
    return ", ".join(p for p in parts if p) + f" ({s.get('source', '?')}, {s.get('time', '?')})"


def _provenance(meta):
    """Build, commit source, tuning variables and the GPU's state at start and end, when recorded."""
    lines = []
    build = meta.get("build")
    if isinstance(build, dict):
        lines.append(f"- build: {build.get('type', '?')}, CUDA architectures {build.get('cuda_architectures', '?')}, "
                     f"nvcc {build.get('cuda_compiler_version', '?')}; commit from {meta.get('git', {}).get('source', '?')}")
    env = meta.get("environment")
    if isinstance(env, dict) and env:
        lines.append("- environment: " + ", ".join(f"`{k}={v}`" for k, v in sorted(env.items())))
    state = meta.get("gpu_state")
    if isinstance(state, dict):
        driver = (state.get("start") or {}).get("driver_version")
        if driver:
            lines.append(f"- driver: {driver}")
        lines.append(f"- GPU at start: {_snapshot(state.get('start'))}")
        lines.append(f"- GPU at end: {_snapshot(state.get('end'))}")
    return lines


def write_report(doc, out_dir, figures, skipped, sources):
    device = doc["device"]
    meta = doc["meta"]
    lines = [f"# decode-bench run: {device['name']}", ""]
    if meta.get("synthetic"):
        lines += ["> **Synthetic test data** — these numbers were not measured on any GPU.", ""]
    lines += [f"- results: {', '.join(sources)}",
              f"- command: `{meta.get('command', ' '.join(meta.get('argv', [])))}`",
              f"- git: {meta.get('git', {}).get('sha', '?')}{' (dirty)' if meta.get('git', {}).get('dirty') else ''}",
              f"- preset: {meta.get('preset', '?')}, timestamp: {meta.get('timestamp', '?')}"] + _provenance(meta) + ["",
              "## Device", "", "| field | value |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in device.items() if not isinstance(v, (dict, list))]
    lines += ["", "## Ceilings (measured)", "", "| ceiling | value | unit | kernel |", "| --- | --- | --- | --- |"]
    lines += [f"| {k} | {c['value']:.1f} | {c['unit']} | {c.get('kernel', '')} |" for k, c in sorted(doc["ceilings"].items())]
    floor = _read_floor(doc)
    if floor:
        lines += ["", "Read floor: the DRAM read kernels over exactly B bytes, cold, median (what any kernel reading "
                  "B bytes can reach under the sweep's timing; docs/harness.md).", "",
                  "| bytes | us | GB/s | of DRAM read ceiling |", "| --- | --- | --- | --- |"] + floor
    lines += ["", "## Headline numbers (best point per experiment)", "",
              "| experiment | GB/s | of DRAM read ceiling | of read floor | median us | point |",
              "| --- | --- | --- | --- | --- | --- |"]
    lines += _headlines(doc) or ["| (no ok timed points) | | | | | |"]
    shared = shared_prefix_table(doc)
    if shared:
        lines += ["", "## Shared prefix: shared_prefix against batch_decode on the same pages", "",
                  "bound = max(unique K/V bytes / DRAM read ceiling, prefix FLOPs / FP16 tensor roof), both measured "
                  "in this run.", "",
                  "| experiment | N | P | S | overlapped | shared_prefix us | batch_decode us | speedup | bound us | "
                  "shared_prefix / bound |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        lines += shared
    statuses = defaultdict(int)
    for p in doc["points"]:
        statuses[p["status"]] += 1
    lines += ["", "Points by status: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())), "", "## Figures", ""]
    for name, files in figures.items():
        png = os.path.basename(files[0])
        lines += [f"### {name}", "", f"![{name}]({png})", ""]
    if skipped:
        lines += ["## Skipped figures", ""] + [f"- {name}: {why}" for name, why in skipped.items()]
    path = os.path.join(out_dir, "report.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path
