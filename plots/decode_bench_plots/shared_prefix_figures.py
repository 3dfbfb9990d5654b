"""Shared-prefix (cascade) figures: the speedup of kernel=shared_prefix over kernel=batch_decode on
the same point (same pool state, same run) against prefix length, one line per batch size (as in
the FlashInfer paper's shared-prefix figure), and a roofline of those points against the run's
DRAM read ceiling and measured FP16 tensor-core roof. Both read the JSON only; when the file holds
no pair, the figures are skipped through `note`."""
from collections import defaultdict

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .load import ceiling, experiment, ok_points, param  # noqa: E402
from .style import run_figures, save  # noqa: E402

# Parameters that tell the two kernels' points of one shape apart; everything else must match.
_NOT_SHAPE = ("kernel", "prefix_overlap")


def _shape_key(point):
    return experiment(point), tuple(sorted((k, str(v)) for k, v in point["parameters"].items() if k not in _NOT_SHAPE))


def shared_prefix_pairs(doc):
    """[(shared_prefix point, batch_decode point)] of ok points with the same experiment and shape
    (one pair per shared_prefix point, so both prefix_overlap settings get their own)."""
    pts = [p for p in ok_points(doc) if "capacity" not in p and (param(p, "prefix_len") or 0) > 0]
    batch = {_shape_key(p): p for p in pts if param(p, "kernel") == "batch_decode"}
    return [(p, batch[_shape_key(p)]) for p in pts
            if param(p, "kernel") == "shared_prefix" and _shape_key(p) in batch]


def speedup(pair):
    shared, batch = pair
    return batch["timing"]["median_us"] / shared["timing"]["median_us"]


def _save(fig, out_dir, name):
    return save(fig, f"{out_dir}/{name}")


def _series_label(p, overlaps):
    label = f"N={param(p, 'batch', 1)}, S={param(p, 'suffix_len')}"
    if param(p, "dtype", "fp16") != "fp16":
        label += f", {param(p, 'dtype')}"
    if param(p, "group_prefix_len"):
        label += f", group prefix {param(p, 'group_prefix_len')} x {param(p, 'groups', 1)}"
    if len(overlaps) > 1:
        label += ", overlapped" if param(p, "prefix_overlap", True) else ", one stream"
    return label


def shared_prefix_speedup(doc, out_dir, note):
    pairs = shared_prefix_pairs(doc)
    if not pairs:
        return note("shared_prefix_speedup_vs_prefix_len", "no shared_prefix point with a batch_decode point of its shape")
    overlaps = {param(s, "prefix_overlap", True) for s, _ in pairs}
    series = defaultdict(list)
    order = {}  # label -> (N, S, label): legends in numeric order, not text order (1024 before 128)
    for pair in pairs:
        label = _series_label(pair[0], overlaps)
        series[label].append((param(pair[0], "prefix_len"), speedup(pair)))
        order[label] = (param(pair[0], "batch", 1), param(pair[0], "suffix_len") or 0, label)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    # One colour per batch size N, one line style per suffix length S, so 15 series stay apart.
    batches = sorted({key[0] for key in order.values()})
    suffixes = sorted({key[1] for key in order.values()})
    colours = plt.get_cmap("viridis")(np.linspace(0, 0.9, max(len(batches), 1)))
    styles = ["-", "--", ":", "-."]
    for label in sorted(series, key=lambda s: order[s]):
        n, suffix, _ = order[label]
        ax.plot(*zip(*sorted(series[label])), marker="o", ms=4, label=label, color=colours[batches.index(n)],
                linestyle=styles[suffixes.index(suffix) % len(styles)])
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set(xlabel="shared prefix length P (tokens)", ylabel="speedup: batch_decode time / shared_prefix time (ratio)",
           title="Shared-prefix speedup over batch decode on the same pages")
    ax.legend(fontsize=6)
    return _save(fig, out_dir, "shared_prefix_speedup_vs_prefix_len")


def shared_prefix_roofline(doc, out_dir, note):
    pts = [p for p in ok_points(doc) if "capacity" not in p and (param(p, "prefix_len") or 0) > 0
           and p["model"]["bytes"] > 0 and p["model"]["flops"] > 0]
    dram, tensor = ceiling(doc, "dram_read"), ceiling(doc, "fp16_tensor")
    if not pts or not dram or not tensor:
        return note("shared_prefix_roofline", "no shared-prefix points, or no DRAM read / FP16 tensor ceiling")
    tensor_gflops = tensor * 1e3
    xs = [p["model"]["flops"] / p["model"]["bytes"] for p in pts]
    x_lo, x_hi = min(xs) / 4, max(max(xs) * 4, 4 * tensor_gflops / dram)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    ridge = tensor_gflops / dram
    ax.plot([x_lo, ridge], [dram * x_lo, tensor_gflops], color="tab:blue", lw=1.5)
    ax.text(x_lo * 1.3, dram * x_lo * 1.3, f"DRAM read {dram:.0f} GB/s", color="tab:blue", fontsize=8, rotation=30)
    ax.plot([ridge, x_hi], [tensor_gflops, tensor_gflops], color="black", lw=1.2, ls="--")
    ax.text(x_hi, tensor_gflops, f"FP16 tensor {tensor:.0f} TFLOP/s (measured)", ha="right", va="bottom", fontsize=8)
    batches = sorted({param(p, "batch", 1) for p in pts})
    colors = {b: plt.cm.viridis(i / max(1, len(batches) - 1)) for i, b in enumerate(batches)}
    seen = set()
    for p, x in sorted(zip(pts, xs), key=lambda px: (param(px[0], "batch", 1), param(px[0], "kernel"))):
        kernel, b = param(p, "kernel"), param(p, "batch", 1)
        y = p["model"]["flops"] / (p["timing"]["median_us"] * 1e3)
        label = f"{kernel}, N={b}"
        ax.scatter([x], [y], marker="o" if kernel == "shared_prefix" else "s", s=30,
                   facecolors=colors[b] if kernel == "shared_prefix" else "none", edgecolors=colors[b],
                   label=None if label in seen else label, zorder=3)
        seen.add(label)
    ax.set(xscale="log", yscale="log", xlim=(x_lo, x_hi), xlabel="FLOP per unique K/V byte (prefix counted once)",
           ylabel="GFLOP/s (4 (P + S) d per query head / median time)",
           title="Shared-prefix roofline: filled = shared_prefix, open = batch_decode")
    ax.grid(True, which="both", alpha=0.2)
    ax.legend(fontsize=6, loc="lower right")
    return _save(fig, out_dir, "shared_prefix_roofline")


def shared_prefix_table(doc):
    """Markdown rows: one per shared_prefix point with its batch_decode pair, its bound and the ratio."""
    rows = []
    for shared, batch in sorted(shared_prefix_pairs(doc), key=lambda pr: (experiment(pr[0]), param(pr[0], "batch", 1),
                                                                          param(pr[0], "prefix_len"), param(pr[0], "suffix_len"))):
        b = shared.get("bound", {}).get("bound_us")
        median = shared["timing"]["median_us"]
        bound_text, ratio_text = (f"{b:.1f}", f"{median / b:.2f}") if b else ("n/a", "n/a")
        rows.append(f"| {experiment(shared)} | {param(shared, 'batch', 1)} | {param(shared, 'prefix_len')} | "
                    f"{param(shared, 'suffix_len')} | {'yes' if param(shared, 'prefix_overlap', True) else 'no'} | "
                    f"{median:.1f} | {batch['timing']['median_us']:.1f} | {speedup((shared, batch)):.2f}x | "
                    f"{bound_text} | {ratio_text} |")
    return rows


FIGURES = (shared_prefix_speedup, shared_prefix_roofline)


def make_shared_prefix_figures(doc, out_dir, note):
    return run_figures(FIGURES, doc, out_dir, note)
