"""Hierarchical roofline: measured bandwidth ceilings (DRAM, L2, L1) and compute roofs (FP32,
FP16, FP16 tensor; on Hopper the warpgroup-MMA FP16, BF16 and FP8 roofs) from the document's "ceilings", each point at its measured arithmetic
intensity per memory level (counters.levels.*), or at its model intensity without counters.
Axes: FLOP/byte vs GFLOP/s, log-log (GB/s x FLOP/B = GFLOP/s)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .load import experiment, ok_points  # noqa: E402
from .style import declutter, save  # noqa: E402

BANDWIDTHS = (("dram_read", "DRAM", "tab:blue"), ("l2_read", "L2", "tab:green"), ("l1_shared", "L1/shared", "tab:purple"))
COMPUTE = (("fp32_fma", "FP32 FMA"), ("fp16_fma", "FP16 FMA"), ("fp16_tensor", "FP16 tensor (mma.sync)"),
           ("fp16_tensor_wgmma", "FP16 tensor (wgmma)"), ("bf16_tensor_wgmma", "BF16 tensor (wgmma)"),
           ("fp8_e4m3_tensor_wgmma", "FP8 E4M3 tensor (wgmma)"))
LEVEL_MARKERS = {"dram": ("o", "DRAM"), "l2": ("s", "L2"), "l1": ("^", "L1")}


def _ceilings(doc):
    bw = [(label, float(doc["ceilings"][k]["value"]), color) for k, label, color in BANDWIDTHS if k in doc["ceilings"]]
    roofs = [(label, float(doc["ceilings"][k]["value"]) * 1e3) for k, label in COMPUTE if k in doc["ceilings"]]
    return bw, roofs  # GB/s, GFLOP/s


def point_markers(point):
    """[(level, intensity FLOP/B, GFLOP/s, measured?)] for one ok point."""
    model = point["model"]
    counters = point.get("counters") or {}
    levels = counters.get("levels") if counters.get("available", True) else None
    if levels and counters.get("achieved_tflops") is not None:
        gflops = counters["achieved_tflops"] * 1e3
        out = [(lvl, v["arithmetic_intensity"], gflops, True) for lvl, v in levels.items()
               if lvl in LEVEL_MARKERS and v.get("arithmetic_intensity")]
        if out:
            return out
    if model["bytes"] > 0 and model["flops"] > 0:
        return [("dram", model["flops"] / model["bytes"], model["flops"] / (point["timing"]["median_us"] * 1e3), False)]
    return []


def draw(doc, points, title, path_stem):
    bw, roofs = _ceilings(doc)
    markers = [(p, m) for p in points for m in point_markers(p)]
    if not markers and not bw:
        return None
    xs = [m[1] for _, m in markers] or [1.0]
    x_lo = min(min(xs) / 4, 0.01)
    x_hi = max(max(xs) * 4, 100.0)
    if roofs and bw:
        x_hi = max(x_hi, 4 * max(r for _, r in roofs) / min(b for _, b, _ in bw))
    fig, ax = plt.subplots(figsize=(8, 5.5))
    top = max([r for _, r in roofs] or [max(b for _, b, _ in bw) * x_hi if bw else 1.0])
    roof_labels = []
    for label, r in sorted(roofs, key=lambda lr: lr[1]):
        ax.axhline(r, color="black", lw=1.2, ls="-" if label == "FP32 FMA" else "--")
        roof_labels.append(ax.text(x_hi, r, f"{label} {r / 1e3:.1f} TFLOP/s", ha="right", va="bottom", fontsize=8))
    fp32 = dict(roofs).get("FP32 FMA") or (roofs[0][1] if roofs else None)
    for i, (label, b, color) in enumerate(bw):
        x_end = (top / b) if roofs else x_hi
        ax.plot([x_lo, x_end], [b * x_lo, b * x_end], color=color, lw=1.5)
        ax.text(x_lo * 1.3, b * x_lo * 1.3, f"{label} {b:.0f} GB/s", color=color, fontsize=8, rotation=30)
        if fp32:
            ridge = fp32 / b
            ax.plot([ridge], [fp32], marker="x", color=color)
            ax.annotate(f"ridge {ridge:.1f} FLOP/B", (ridge, fp32), textcoords="offset points", xytext=(4, -12 - 10 * i),
                        fontsize=7, color=color)
    kernels = sorted({p["parameters"].get("kernel", "?") for p, _ in markers})
    colors = {k: plt.cm.tab10(i % 10) for i, k in enumerate(kernels)}
    seen = set()
    for p, (level, x, y, measured) in markers:
        kernel = p["parameters"].get("kernel", "?")
        shape, level_name = LEVEL_MARKERS[level]
        label = f"{kernel} ({level_name if measured else 'model'})"
        ax.scatter([x], [y], marker=shape, s=28, facecolors=colors[kernel] if measured else "none",
                   edgecolors=colors[kernel], label=None if label in seen else label, zorder=3)
        seen.add(label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("performance (GFLOP/s)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.2)
    if seen:
        ax.legend(fontsize=7, loc="lower right")
    # Roofs of similar height (FP32 and FP16 FMA) would print on top of each other: the higher
    # label moves up; then the ridge notes and bandwidth labels keep clear of them.
    declutter(ax, roof_labels + [t for t in ax.texts if t not in roof_labels])
    return save(fig, path_stem)


def make_rooflines(doc, out_dir, note):
    """One roofline per experiment and one overall; returns {figure name: [files]}."""
    points = [p for p in ok_points(doc) if "capacity" not in p]
    made = {}
    if not points:
        note("roofline", "no ok timed points")
        return made
    files = draw(doc, points, f"Roofline: all experiments ({doc['device']['name']})", f"{out_dir}/roofline_all")
    if files:
        made["roofline_all"] = files
    for exp in sorted({experiment(p) for p in points}):
        sub = [p for p in points if experiment(p) == exp]
        name = f"roofline_{exp}"
        files = draw(doc, sub, f"Roofline: {exp}", f"{out_dir}/{name}")
        if files:
            made[name] = files
        else:
            note(name, "no point has a positive byte and FLOP model")
    return made
