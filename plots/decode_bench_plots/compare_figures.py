"""Figures of `decode-bench plot A.json B.json --compare`: the per-point ratio B / A with its
bootstrap interval, grouped by experiment (from the JSON report of `decode-bench compare`, so the
statistics are computed once, in C++), and a roofline with both runs' ceilings and points."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .load import ok_points  # noqa: E402
from .roofline import BANDWIDTHS, COMPUTE, point_markers  # noqa: E402
from .style import declutter, save  # noqa: E402

VERDICT_STYLE = {"regression": ("tab:red", "regression"), "noisy": ("tab:orange", "noisy (cannot judge)"),
                 "improvement": ("tab:green", "improvement"), "unchanged": ("tab:blue", "unchanged")}


def ratio_by_experiment(report, out_dir, note):
    points = report.get("points", [])
    if not points:
        return note("compare_ratio_by_experiment", "no common point to compare")
    order = []
    for p in points:
        if p["experiment"] not in order:
            order.append(p["experiment"])
    fig, ax = plt.subplots(figsize=(max(7, 0.25 * len(points) + 3), 4.8))
    x = 0
    ticks, labels, seen = [], [], set()
    for exp in order:
        group = [p for p in points if p["experiment"] == exp]
        start = x
        for p in group:
            color, label = VERDICT_STYLE.get(p["verdict"], ("black", p["verdict"]))
            if "interval" in p:
                lo, hi = p["interval"]
                ax.errorbar([x], [p["ratio"]], yerr=[[p["ratio"] - lo], [hi - p["ratio"]]], fmt="o", ms=4, color=color,
                            capsize=2, label=None if label in seen else label)
            else:
                ax.plot([x], [p["ratio"]], "D", ms=4, mfc="none", color=color, label=None if label in seen else label)
            seen.add(label)
            x += 1
        ticks.append((start + x - 1) / 2)
        labels.append(f"{exp} ({len(group)})")
        ax.axvline(x - 0.5, color="0.85", lw=0.8)
        x += 0.5
    t = report.get("threshold", 0.0)
    ax.axhline(1.0, color="black", lw=0.9)
    bad = 1 + t if report.get("lower_is_better") else 1 - t
    ax.axhline(bad, color="tab:red", lw=0.8, ls="--", label=f"threshold ({100 * t:.0f}%)")
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
    better = "lower" if report.get("lower_is_better") else "higher"
    ax.set(xlabel="experiment (points compared)", ylabel=f"B / A of {report.get('metric', '?')} (ratio, {better} is better)",
           title=f"B: {report['b']['device']}\nvs A: {report['a']['device']}: ratio per point with bootstrap interval")
    ax.title.set_fontsize(9)
    # The devices' DRAM ceiling ratio is a reference line for fractions of ceilings only (a time
    # ratio would sit at its inverse, and only for memory-bound points).
    normalized = report.get("metric") == "fraction_of_ceiling"
    for c in report.get("ceiling_ratios", []) if normalized else []:
        if c["name"] == "dram_read":
            ax.axhline(c["ratio"], color="0.5", lw=0.8, ls=":", label=f"device DRAM ceiling ratio {c['ratio']:.3f}")
    ax.legend(fontsize=7)
    return save(fig, f"{out_dir}/compare_ratio_by_experiment")


def _ceilings(doc):
    bw = [(label, float(doc["ceilings"][k]["value"])) for k, label, _ in BANDWIDTHS if k == "dram_read" and k in doc["ceilings"]]
    roofs = [(label, float(doc["ceilings"][k]["value"]) * 1e3) for k, label in COMPUTE
             if k in doc["ceilings"] and k != "fp16_tensor"]
    return bw, roofs


def roofline_compare(doc_a, doc_b, out_dir, note):
    sides = (("A", doc_a, "tab:blue", "-"), ("B", doc_b, "tab:red", "--"))
    if not any(d["ceilings"] for _, d, _, _ in sides):
        return note("roofline_compare", "neither run has measured ceilings")
    markers = {tag: [m for p in ok_points(d) if "capacity" not in p for m in point_markers(p) if m[0] == "dram"]
               for tag, d, _, _ in sides}
    xs = [m[1] for ms in markers.values() for m in ms] or [1.0]
    x_lo, x_hi = min(min(xs) / 4, 0.01), max(max(xs) * 4, 1000.0)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    texts = []
    for tag, doc, color, ls in sides:
        name = doc["device"]["name"]
        bw, roofs = _ceilings(doc)
        top = max([r for _, r in roofs] or [1.0])
        for label, b in bw:
            x_end = top / b if roofs else x_hi
            ax.plot([x_lo, x_end], [b * x_lo, b * x_end], color=color, ls=ls, lw=1.4,
                    label=f"{tag}: {label} read {b:.0f} GB/s")
        # Roofs in the legend, not as labels: four nearly equal roofs (FP32 and FP16 FMA on two
        # GPUs) cannot be labelled on the lines without covering each other.
        for label, r in roofs:
            ax.axhline(r, color=color, ls=ls, lw=1.0 if label == "FP32 FMA" else 2.2, alpha=1.0 if label == "FP32 FMA" else 0.45,
                       label=f"{tag}: {label} {r / 1e3:.1f} TFLOP/s")
        pts = markers[tag]
        if pts:
            ax.scatter([m[1] for m in pts], [m[2] for m in pts], s=22, marker="o" if tag == "A" else "s",
                       facecolors="none" if tag == "A" else color, edgecolors=color, zorder=3,
                       label=f"{tag}: {name} ({len(pts)} points, model bytes)")
    ax.set(xscale="log", yscale="log", xlim=(x_lo, x_hi), xlabel="arithmetic intensity (FLOP/byte)",
           ylabel="performance (GFLOP/s)", title="Roofline of both runs: measured ceilings and points")
    ax.grid(True, which="both", alpha=0.2)
    tops = [r for _, d, _, _ in sides for _, r in _ceilings(d)[1]]
    if tops:
        ax.set_ylim(top=max(tops) * 3)
    ax.legend(fontsize=7, loc="lower right")
    declutter(ax, texts)
    return save(fig, f"{out_dir}/roofline_compare")


def make_compare_figures(report, doc_a, doc_b, out_dir, note):
    made = {}
    for name, files in (("compare_ratio_by_experiment", ratio_by_experiment(report, out_dir, note)),
                        ("roofline_compare", roofline_compare(doc_a, doc_b, out_dir, note))):
        if files:
            made[name] = files
    return made
