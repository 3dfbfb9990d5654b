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
        shape = ", ".join(f"{k}={param(p, k)}" for k in ("kernel", "layout", "dtype", "T", "batch", "blocks", "page_size")
                          if param(p, k) is not None)
        rows.append(f"| {exp} | {gbps(p):.1f} | {frac} | {p['timing']['median_us']:.2f} | {shape} |")
    return rows


def write_report(doc, out_dir, figures, skipped, sources):
    device = doc["device"]
    meta = doc["meta"]
    lines = [f"# decode-bench run: {device['name']}", ""]
    if meta.get("synthetic"):
        lines += ["> **Synthetic test data** — these numbers were not measured on any GPU.", ""]
    lines += [f"- results: {', '.join(sources)}",
              f"- command: `{meta.get('command', ' '.join(meta.get('argv', [])))}`",
              f"- git: {meta.get('git', {}).get('sha', '?')}{' (dirty)' if meta.get('git', {}).get('dirty') else ''}",
              f"- preset: {meta.get('preset', '?')}, timestamp: {meta.get('timestamp', '?')}", "",
              "## Device", "", "| field | value |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in device.items() if not isinstance(v, (dict, list))]
    lines += ["", "## Ceilings (measured)", "", "| ceiling | value | unit | kernel |", "| --- | --- | --- | --- |"]
    lines += [f"| {k} | {c['value']:.1f} | {c['unit']} | {c.get('kernel', '')} |" for k, c in sorted(doc["ceilings"].items())]
    lines += ["", "## Headline numbers (best point per experiment)", "",
              "| experiment | GB/s | of DRAM read ceiling | median us | point |", "| --- | --- | --- | --- | --- |"]
    lines += _headlines(doc) or ["| (no ok timed points) | | | | |"]
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
