"""The seed paper's figures from a `paper` run (Fig. 1-6), plus paged/contiguous ratio vs page
size and measured/model bytes. Each figure selects its points by parameters; when the file holds
none, the figure is skipped through `note` (never an error)."""
from collections import defaultdict
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .load import ceiling, experiment, gbps, ok_points, param  # noqa: E402
from .style import numeric_key, run_figures, save  # noqa: E402

KERNEL_ORDER = ("cpu_reference", "baseline", "flash_decode")


def _save(fig, out_dir, name):
    return save(fig, f"{out_dir}/{name}", name)


def _timed(doc):
    return [p for p in ok_points(doc) if "capacity" not in p]


def _kernel_points(doc, kernel, end_to_end=False, layout="contiguous"):
    return [p for p in _timed(doc) if param(p, "kernel") == kernel and bool(param(p, "end_to_end", False)) == end_to_end
            and param(p, "layout", "contiguous") == layout and param(p, "T") is not None]


def _richest_experiment(points, axis):
    """The experiment whose points span the most distinct values of `axis` (one experiment per
    figure, so points of different shapes are not mixed)."""
    by_exp = defaultdict(list)
    for p in points:
        by_exp[experiment(p)].append(p)
    if not by_exp:
        return []
    best = max(by_exp.values(), key=lambda ps: len({param(p, axis) for p in ps}))
    return best


def fig1_latency_vs_T(doc, out_dir, note):
    pts = _richest_experiment([p for p in _kernel_points(doc, "flash_decode") if param(p, "blocks")], "blocks")
    if len({param(p, "blocks") for p in pts}) < 2:
        return note("fig1_latency_vs_T", "no flash_decode points over several block counts")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for blocks in sorted({param(p, "blocks") for p in pts}, key=numeric_key):
        series = sorted((param(p, "T"), p["timing"]["median_us"]) for p in pts if param(p, "blocks") == blocks)
        ax.plot(*zip(*series), marker="o", ms=3, label=f"{blocks} blocks")
    ax.set(xscale="log", yscale="log", xlabel="sequence length T (tokens)", ylabel="latency (us)",
           title="Fig. 1: flash-decode latency vs T per block count")
    ax.legend(fontsize=7)
    return _save(fig, out_dir, "fig1_latency_vs_T")


def fig2_peak_throughput_per_blocks(doc, out_dir, note):
    pts = _richest_experiment([p for p in _kernel_points(doc, "flash_decode") if param(p, "blocks")], "blocks")
    if len({param(p, "blocks") for p in pts}) < 2:
        return note("fig2_peak_throughput_per_blocks", "no flash_decode points over several block counts")
    t_max = max(param(p, "T") for p in pts)
    at_max = sorted(((param(p, "blocks"), gbps(p)) for p in pts if param(p, "T") == t_max), key=lambda r: numeric_key(r[0]))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.bar([str(b) for b, _ in at_max], [g for _, g in at_max], color="tab:blue")
    dram = ceiling(doc, "dram_read")
    if dram:
        ax.axhline(dram, color="black", ls="--", lw=1, label=f"DRAM read ceiling {dram:.0f} GB/s")
        ax.legend(fontsize=7)
    ax.set(xlabel="blocks per (sequence, head) (count)", ylabel="throughput (GB/s)", title=f"Fig. 2: peak flash-decode throughput at T = {t_max}")
    return _save(fig, out_dir, "fig2_peak_throughput_per_blocks")


def _best_per_T(points):
    best = {}
    for p in points:
        t = param(p, "T")
        if t not in best or gbps(p) > gbps(best[t]):
            best[t] = p
    return sorted((t, gbps(p)) for t, p in best.items())


def _throughput_vs_T(doc, out_dir, note, name, title, end_to_end):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = 0
    for kernel in KERNEL_ORDER:
        # One sequence only: the seed's T sweep; batched points (page-size, fragmentation
        # experiments) at small T would otherwise join the curve as a spurious first point.
        pts = [p for p in _kernel_points(doc, kernel, end_to_end=end_to_end) if param(p, "batch", 1) == 1]
        if not pts:
            continue
        series = _best_per_T(pts)  # flash-decode: its best block count at each T
        ax.plot(*zip(*series), marker="o", ms=3, label=kernel)
        drawn += 1
    if drawn == 0:
        plt.close(fig)
        return note(name, f"no {'end-to-end' if end_to_end else 'kernel-only'} contiguous points over T")
    dram = ceiling(doc, "dram_read")
    if dram and not end_to_end:
        ax.axhline(dram, color="black", ls="--", lw=1, label=f"DRAM read ceiling {dram:.0f} GB/s")
    ax.set(xscale="log", yscale="log", xlabel="sequence length T (tokens)", ylabel="throughput (GB/s)", title=title)
    ax.legend(fontsize=7)
    return _save(fig, out_dir, name)


def fig3_kernel_throughput(doc, out_dir, note):
    return _throughput_vs_T(doc, out_dir, note, "fig3_kernel_throughput_vs_T",
                            "Fig. 3: kernel-only throughput vs T", end_to_end=False)


def fig4_end_to_end(doc, out_dir, note):
    return _throughput_vs_T(doc, out_dir, note, "fig4_end_to_end_throughput_vs_T",
                            "Fig. 4: end-to-end throughput vs T (includes transfers)", end_to_end=True)


def fig5_capacity(doc, out_dir, note):
    pts = [p for p in ok_points(doc) if isinstance(p.get("capacity"), dict) and param(p, "max_seq_len")]
    if not pts:
        return note("fig5_capacity", "no capacity points (run the preset's capacity experiment, "
                    "e.g. `decode-bench sweep --preset paper --experiment capacity`, and pass that file too)")
    groups = defaultdict(list)
    # Storage types count in the bytes per token (FP8 holds twice the FP16 sequences): one series
    # per dtype when the file has several.
    several_dtypes = len({param(p, "dtype", "fp16") for p in pts}) > 1
    for p in pts:
        layout = param(p, "layout", "?")
        label = f"paged (page {param(p, 'page_size')})" if layout == "paged" else layout
        if several_dtypes:
            label += f", {param(p, 'dtype', 'fp16')}"
        groups[label].append((param(p, "max_seq_len"), p["capacity"].get("sequences", 0)))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, series in sorted(groups.items(), key=lambda kv: (kv[0].startswith("paged"), numeric_key(kv[0].split("page ")[-1]))):
        ax.plot(*zip(*sorted(series)), marker="o", ms=4, label=label)
    ax.set(xscale="log", yscale="log", xlabel="max_seq_len (tokens)", ylabel="sequences that fit (count)",
           title="Fig. 5: KV-cache capacity vs max_seq_len")
    ax.set_xscale("log", base=2)
    ax.legend(fontsize=7)
    return _save(fig, out_dir, "fig5_capacity_vs_max_seq_len")


def _paged_sweep(doc):
    paged = _richest_experiment([p for p in _timed(doc) if param(p, "layout") == "paged" and param(p, "page_size")
                                 and not param(p, "end_to_end", False)], "page_size")
    if not paged:
        return [], []
    exp = experiment(paged[0])
    contiguous = [p for p in _timed(doc) if experiment(p) == exp and param(p, "layout", "contiguous") == "contiguous"
                  and not param(p, "end_to_end", False)]
    return paged, contiguous


def fig6_page_size(doc, out_dir, note):
    paged, contiguous = _paged_sweep(doc)
    if len({param(p, "page_size") for p in paged}) < 2:
        return note("fig6_page_size_sweep", "no paged points over several page sizes")
    by_size = defaultdict(list)
    for p in paged:
        by_size[param(p, "page_size")].append(gbps(p))
    sizes = sorted(by_size)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.bar([str(s) for s in sizes], [statistics.median(by_size[s]) for s in sizes], color="tab:orange", label="paged")
    if contiguous:
        c = statistics.median(gbps(p) for p in contiguous)
        ax.axhline(c, color="tab:blue", ls="--", label=f"contiguous {c:.0f} GB/s")
    ax.set(xlabel="page size (tokens)", ylabel="throughput (GB/s)", title="Fig. 6: page-size sweep")
    ax.legend(fontsize=7)
    return _save(fig, out_dir, "fig6_page_size_sweep")


_LAYOUT_KEYS = ("layout", "page_size", "page_order", "fragmentation")


def _shape_key(p):
    return tuple(sorted((k, str(v)) for k, v in p["parameters"].items() if k not in _LAYOUT_KEYS))


def paged_over_contiguous(doc, out_dir, note):
    timed = _timed(doc)
    contiguous = {(experiment(p), _shape_key(p)): p for p in timed if param(p, "layout", "contiguous") == "contiguous"}
    series = defaultdict(list)
    for p in timed:
        if param(p, "layout") != "paged" or not param(p, "page_size"):
            continue
        c = contiguous.get((experiment(p), _shape_key(p)))
        if c:
            series[f"T={param(p, 'T')}, {param(p, 'page_order', '')}".rstrip(", ")].append(
                (param(p, "page_size"), gbps(p) / gbps(c)))
    if not series:
        return note("paged_over_contiguous_vs_page_size", "no paged point with a matching contiguous point")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, pts in sorted(series.items(), key=lambda kv: numeric_key(kv[0].split("T=")[-1])):
        ax.plot(*zip(*sorted(pts)), marker="o", ms=4, label=label)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set(xlabel="page size (tokens)", ylabel="paged / contiguous throughput (ratio)",
           title="Paged over contiguous throughput vs page size")
    ax.legend(fontsize=7)
    return _save(fig, out_dir, "paged_over_contiguous_vs_page_size")


def measured_over_model_bytes(doc, out_dir, note):
    rows = []
    for p in _timed(doc):
        levels = (p.get("counters") or {}).get("levels") or {}
        for level in ("dram", "l2", "l1"):
            r = levels.get(level, {}).get("measured_over_model")
            if r:
                rows.append((experiment(p), level, param(p, "T", 0), r))
    if not rows:
        return note("measured_over_model_bytes", "no point has counters with measured/model bytes")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    markers = {"dram": "o", "l2": "s", "l1": "^"}
    for exp in sorted({r[0] for r in rows}):
        for level in ("dram", "l2", "l1"):
            pts = sorted((t, r) for e, lv, t, r in rows if e == exp and lv == level)
            if pts:
                ax.plot(*zip(*pts), marker=markers[level], ms=4, ls=":", label=f"{exp} {level}")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set(xscale="log", yscale="log", xlabel="sequence length T (tokens)", ylabel="measured / model bytes (ratio)",
           title="Measured over model bytes (>1: re-reads; <1: caching)")
    ax.legend(fontsize=6)
    return _save(fig, out_dir, "measured_over_model_bytes")


FIGURES = (fig1_latency_vs_T, fig2_peak_throughput_per_blocks, fig3_kernel_throughput, fig4_end_to_end,
           fig5_capacity, fig6_page_size, paged_over_contiguous, measured_over_model_bytes)


def make_paper_figures(doc, out_dir, note):
    return run_figures(FIGURES, doc, out_dir, note)
