"""A run through several backends (the `backend` axis) side by side: `backends_median_by_shape`,
grouped bars of each backend's median time per shape, one panel per experiment.

The grouping is `decode-bench show --by-backend`'s (sweeps/backend_table.cpp), so the figure and the
table read the same: a point's backend is parameters.backend ("decode-bench" when absent), its shape
is its id with the "backend=NAME" component removed; backends are ordered decode-bench first, then
by name; experiments in order of first appearance, shapes in file order within each; a backend
whose point is not ok (or ok without a median) has no time and shows its status instead. Where the
backends' ok points read q and wrote o in different types (backend.io_dtype), each legend entry
names its backend's, as the table's io line does (io_dtype_note, sweeps/backend_table.hpp)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from .style import save  # noqa: E402

DEFAULT_BACKEND = "decode-bench"  # backends/registry.hpp's kDefaultBackend
FIGURE = "backends_median_by_shape"

# How a backend without a time is drawn: a short hatched stub in its colour, one hatch per status.
_ABSENT_HATCH = {"skipped": "//", "failed": "xx", "error": ".."}


def point_backend(point):
    backend = (point.get("parameters") or {}).get("backend")
    return backend if isinstance(backend, str) and backend else DEFAULT_BACKEND


def shape_of(point):
    """The id without its "backend=NAME" component, joined as backend_table.cpp's shape_of joins
    the rest (an empty first component adds no separator)."""
    out = ""
    for part in str(point.get("id", "")).split("/"):
        if not part.startswith("backend="):
            out += ("/" if out else "") + part
    return out


def _status_word(status):
    if status == "verification_failed":
        return "failed"
    return status or "no status"


def _cell(point):
    """(status, median_us or None) of one backend's point, as the table's cell."""
    timing = point.get("timing")
    median = timing.get("median_us") if isinstance(timing, dict) else None
    timed = isinstance(median, (int, float)) and not isinstance(median, bool)
    if point.get("status") == "ok" and timed:
        return "ok", float(median)
    return _status_word(point.get("status", "")), None


def backend_rows(points):
    """{"backends": [...], "rows": [{"experiment", "shape", "cells": {backend: (status, median_us)},
    "fastest"}]}: the rows of `show --by-backend` in its order. A backend with no point of a shape
    has no entry in that row's cells; `fastest` is None when no backend is ok."""
    backends = []
    for p in points:
        if point_backend(p) not in backends:
            backends.append(point_backend(p))
    backends.sort(key=lambda b: (b != DEFAULT_BACKEND, b))
    experiments, rows = [], {}
    for p in points:
        exp = p.get("experiment") if isinstance(p.get("experiment"), str) else ""
        if exp not in rows:
            experiments.append(exp)
            rows[exp] = {}
        row = rows[exp].setdefault(shape_of(p), {"experiment": exp, "shape": shape_of(p), "cells": {}, "fastest": None})
        row["cells"][point_backend(p)] = _cell(p)
    out = []
    for exp in experiments:
        for row in rows[exp].values():  # dicts keep insertion order: shapes in file order
            timed = [(row["cells"][b][1], i, b) for i, b in enumerate(backends)
                     if b in row["cells"] and row["cells"][b][1] is not None]
            row["fastest"] = min(timed)[2] if timed else None
            out.append(row)
    return {"backends": backends, "rows": out}


def io_dtypes(points):
    """{backend: [io dtypes of its ok points, in order of first appearance]}, or {} when those points
    record one type between them (or none): the legend then names no type."""
    types, seen = {}, []
    for p in points:
        io = (p.get("backend") or {}).get("io_dtype") if isinstance(p.get("backend"), dict) else None
        if p.get("status") != "ok" or not isinstance(io, str) or not io:
            continue
        lst = types.setdefault(point_backend(p), [])
        if io not in lst:
            lst.append(io)
        if io not in seen:
            seen.append(io)
    return types if len(seen) > 1 else {}


def _short_labels(shapes, experiment):
    """Tick labels: the components in which the experiment's shapes differ (all of them when one
    shape), without the "<experiment>/" prefix."""
    prefix = experiment + "/"
    parts = [(s[len(prefix):] if experiment and s.startswith(prefix) else s).split("/") for s in shapes]
    if len(parts) < 2:
        return ["/".join(p) for p in parts]
    common = set(parts[0]).intersection(*parts[1:])
    return ["\n".join(c for c in p if c not in common) or "/".join(p) for p in parts]


def backends_by_shape(doc, out_dir, note):
    points = [p for p in doc["points"] if "capacity" not in p]
    table = backend_rows(points)
    backends = table["backends"]
    if len(backends) < 2:
        return note(FIGURE, f"one backend only ({', '.join(backends) or 'no point'}); "
                            "a run with --set backend=decode-bench,flashinfer has two")
    experiments = []
    for r in table["rows"]:
        if r["experiment"] not in experiments:
            experiments.append(r["experiment"])
    colors = {b: f"C{i % 10}" for i, b in enumerate(backends)}
    width = 0.8 / len(backends)
    labels = {e: _short_labels([r["shape"] for r in table["rows"] if r["experiment"] == e], e) for e in experiments}
    # A group is as wide as its bars need and its tick label's longest line (about 0.06 inch per
    # character of 7-point text), so neighbouring labels do not run into each other.
    group_in = max([0.35 * len(backends)] + [0.06 * len(line) + 0.1 for ls in labels.values() for lab in ls
                                               for line in lab.split("\n")])
    most = max(len(ls) for ls in labels.values())
    fig_width = max(7.0, group_in * most + 1.5)
    fig, axes = plt.subplots(len(experiments), 1, squeeze=False, figsize=(fig_width, 2.9 * len(experiments) + 0.6))
    absent_seen = set()
    for ax, exp in zip(axes[:, 0], experiments):
        rows = [r for r in table["rows"] if r["experiment"] == exp]
        top = max([c[1] for r in rows for c in r["cells"].values() if c[1] is not None] or [1.0])
        for x, r in enumerate(rows):
            for i, b in enumerate(backends):
                pos = x - 0.4 + width * (i + 0.5)
                if b not in r["cells"]:
                    continue  # no point of this shape: an empty slot
                status, median = r["cells"][b]
                if median is not None:
                    ax.bar(pos, median, width, color=colors[b], edgecolor="black" if b == r["fastest"] else colors[b],
                           linewidth=1.2 if b == r["fastest"] else 0.5)
                else:
                    # No time: a short hatched stub, so the slot reads "ran, but no time" and not "fast".
                    absent_seen.add(status)
                    ax.bar(pos, 0.06 * top, width, facecolor="white", edgecolor=colors[b],
                           hatch=_ABSENT_HATCH.get(status, "--"), linewidth=0.8)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(labels[exp], fontsize=7)
        ax.set_xlim(-0.6, len(rows) - 0.4)
        ax.set_ylim(0, top * 1.35)  # headroom for the first panel's legend above the tallest bar
        ax.grid(True, axis="y", alpha=0.25)
        ax.set(xlabel=f"shape in {exp or '(no experiment)'} (varying parameters)",
               ylabel="median time (us, lower is better)")
        ax.xaxis.label.set_fontsize(8)
        ax.yaxis.label.set_fontsize(8)
    io = io_dtypes(points)
    handles = [Patch(facecolor=colors[b], edgecolor=colors[b],
                     label=f"{b} (q, o {'/'.join(io[b])})" if b in io else b) for b in backends]
    handles.append(Patch(facecolor="white", edgecolor="black", linewidth=1.2, label="fastest (black edge)"))
    handles += [Patch(facecolor="white", edgecolor="0.3", hatch=_ABSENT_HATCH.get(s, "--"), label=f"{s} (no time)")
                for s in sorted(absent_seen)]
    # As many legend entries in a row as the width holds (about 1.6 inch each of 7-point text), and
    # the first panel's headroom grown by a row's height for each further row.
    ncol = max(1, min(len(handles), int(fig_width / 1.6)))
    rows = -(-len(handles) // ncol)
    axes[0, 0].set_ylim(0, axes[0, 0].get_ylim()[1] * (1 + 0.15 * (rows - 1)))
    axes[0, 0].legend(handles=handles, fontsize=7, ncol=ncol, loc="upper left")
    axes[0, 0].set_title("Median time per shape and backend (as decode-bench show --by-backend)", fontsize=9)
    return save(fig, f"{out_dir}/{FIGURE}")


def make_backend_figures(doc, out_dir, note):
    files = backends_by_shape(doc, out_dir, note)
    return {FIGURE: files} if files else {}
