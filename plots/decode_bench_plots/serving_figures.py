"""Serving traces (kernel = trace, docs/pools.md "Serving traces on the GPU"): concurrency, step
time and tokens/s over the steps of each pool configuration, and the summary that answers "at what
fragmentation and concurrency does paged decode win on throughput, and by how much".

Trace points of one workload (every parameter equal except the pool's: layout, fragmentation,
page_size, page_order) form a group. In a group, each paged pool is compared with each contiguous
pool:
  ratio             paged tokens/s over contiguous tokens/s (trace.summary.tokens_per_s: tokens
                    over the summed GPU step time), > 1 where paged wins
  concurrency       both pools' mean and peak running sequences
  equal_batch       the paged step time over the contiguous one at equal batch size: the median,
                    over the batch sizes both traces ran at least MIN_STEPS steps of, of the ratio
                    of their median step times (the per-step cost of paging at equal concurrency)
  wins_from         the smallest fragmentation from which paged wins at every larger one too
A workload with a shared system prompt (system_prompt_len > 0: a paged pool shares the prompt's
pages through its radix cache, a contiguous slab holds its own copy) is set beside its twin
without one (every other workload parameter equal): system_prompt_effect lists, per pool pair, the
paged ratio with and without the prompt and both paged pools' mean concurrency.
"""
import json
import os
import statistics
from collections import defaultdict

from .style import save

POOL_KEYS = ("layout", "fragmentation", "page_size", "page_order", "max_seq_len")
PROMPT_KEYS = ("system_prompt_len", "system_prompts")
MIN_STEPS = 3
WINDOW = 50


def trace_points(doc):
    return [p for p in doc["points"] if p.get("status") == "ok" and isinstance(p.get("trace"), dict)]


def pool_label(point):
    prm = point["parameters"]
    if prm.get("layout") == "paged":
        return f"paged p{prm.get('page_size', 16)}"
    return f"contiguous x{float(prm.get('fragmentation', 1.0)):g}"


def _workload_key(point):
    prm = dict(point["parameters"], experiment=point.get("experiment"))
    return tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in prm.items() if k not in POOL_KEYS))


def groups(doc):
    """{workload key: [points]} in file order; each group's workload as a dict."""
    out = defaultdict(list)
    for p in trace_points(doc):
        out[_workload_key(p)].append(p)
    return dict(out)


def _median_step_by_batch(point):
    by = defaultdict(list)
    steps = point["trace"]["steps"]
    for running, us in zip(steps["running"], steps["gpu_us"]):
        if running > 0:
            by[running].append(us)
    return {b: statistics.median(v) for b, v in by.items() if len(v) >= MIN_STEPS}


def equal_batch_ratio(paged, contiguous):
    """(median ratio of paged / contiguous step time over common batch sizes, the sizes)."""
    a, b = _median_step_by_batch(paged), _median_step_by_batch(contiguous)
    common = sorted(set(a) & set(b))
    if not common:
        return None, []
    return statistics.median(a[n] / b[n] for n in common), common


def compare_group(points):
    """The comparison of one group's pools (module docstring)."""
    paged = [p for p in points if p["parameters"].get("layout") == "paged"]
    contiguous = sorted((p for p in points if p["parameters"].get("layout") != "paged"),
                        key=lambda p: float(p["parameters"].get("fragmentation", 1.0)))
    result = []
    for pg in paged:
        pairs = []
        for c in contiguous:
            sp, sc = pg["trace"]["summary"], c["trace"]["summary"]
            ratio = sp["tokens_per_s"] / sc["tokens_per_s"] if sc["tokens_per_s"] > 0 else None
            eq, common = equal_batch_ratio(pg, c)
            pairs.append({
                "contiguous": pool_label(c),
                "fragmentation": float(c["parameters"].get("fragmentation", 1.0)),
                "tokens_per_s_paged": sp["tokens_per_s"],
                "tokens_per_s_contiguous": sc["tokens_per_s"],
                "ratio": ratio,
                "paged_wins": ratio is not None and ratio > 1.0,
                "mean_running_paged": sp["mean_running"],
                "mean_running_contiguous": sc["mean_running"],
                "peak_running_paged": sp["peak_running"],
                "peak_running_contiguous": sc["peak_running"],
                "concurrency_ratio": (sp["mean_running"] / sc["mean_running"]) if sc["mean_running"] > 0 else None,
                "equal_batch_step_ratio": eq,
                "equal_batch_sizes": len(common),
            })
        wins_from = None
        for i in range(len(pairs)):
            if all(q["paged_wins"] for q in pairs[i:]):
                wins_from = pairs[i]["fragmentation"]
                break
        result.append({"paged": pool_label(pg), "pairs": pairs, "paged_wins_from_fragmentation": wins_from,
                       "answer": answer_text(pool_label(pg), pairs, wins_from)})
    return result


def answer_text(paged_label, pairs, wins_from):
    if not pairs:
        return f"{paged_label}: no contiguous pool in this workload to compare with"
    parts = []
    for q in pairs:
        ratio = "n/a" if q["ratio"] is None else f"x{q['ratio']:.2f}"
        eq = "" if q["equal_batch_step_ratio"] is None else f", a step at equal batch x{q['equal_batch_step_ratio']:.2f}"
        parts.append(f"{q['contiguous']}: tokens/s {ratio} (mean running {q['mean_running_paged']:.1f} vs "
                     f"{q['mean_running_contiguous']:.1f}{eq})")
    if wins_from is None:
        head = f"{paged_label} does not win on throughput at any fragmentation measured"
    else:
        first = next(q for q in pairs if q["fragmentation"] == wins_from)
        head = (f"{paged_label} wins on throughput from fragmentation {wins_from:g} on, by x{first['ratio']:.2f} there, "
                f"running {first['mean_running_paged']:.1f} sequences on average against "
                f"{first['mean_running_contiguous']:.1f}")
    return head + "; " + "; ".join(parts)


def summary(doc):
    out = []
    for key, points in groups(doc).items():
        workload = {k: json.loads(v) for k, v in key}
        out.append({"workload": workload,
                    "pools": {pool_label(p): p["trace"]["summary"] for p in points},
                    "comparisons": compare_group(points)})
    add_system_prompt_effect(out)
    return out


def _without_prompt_key(workload):
    return tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in workload.items() if k not in PROMPT_KEYS))


def add_system_prompt_effect(table):
    """Sets system_prompt_effect on each workload with a system prompt that has a twin without one."""
    twins = {_without_prompt_key(g["workload"]): g for g in table if not g["workload"].get("system_prompt_len", 0)}
    for g in table:
        length = g["workload"].get("system_prompt_len", 0)
        twin = twins.get(_without_prompt_key(g["workload"])) if length else None
        if twin is None:
            continue
        rows = []
        for c in g["comparisons"]:
            tc = next((x for x in twin["comparisons"] if x["paged"] == c["paged"]), None)
            for q in c["pairs"] if tc else []:
                tq = next((x for x in tc["pairs"] if x["contiguous"] == q["contiguous"]), None)
                if tq is None:
                    continue
                rows.append({"paged": c["paged"], "contiguous": q["contiguous"], "fragmentation": q["fragmentation"],
                             "ratio_with": q["ratio"], "ratio_without": tq["ratio"],
                             "mean_running_paged_with": q["mean_running_paged"],
                             "mean_running_paged_without": tq["mean_running_paged"],
                             "mean_running_contiguous_with": q["mean_running_contiguous"],
                             "mean_running_contiguous_without": tq["mean_running_contiguous"]})
        g["system_prompt_effect"] = {"system_prompt_len": length,
                                     "system_prompts": g["workload"].get("system_prompts", 1),
                                     "pairs": rows, "answer": system_prompt_text(g["workload"], rows)}


def _ratio(r):
    return "n/a" if r is None else f"x{r:.2f}"


def system_prompt_text(workload, rows):
    head = (f"With a {workload.get('system_prompt_len')}-token system prompt "
            f"({workload.get('system_prompts', 1)} distinct) against none")
    if not rows:
        return head + ": no pool pair in both workloads"
    parts = [f"{q['paged']} over {q['contiguous']} {_ratio(q['ratio_with'])} (without {_ratio(q['ratio_without'])}), "
             f"mean running {q['mean_running_paged_with']:.1f} vs {q['mean_running_contiguous_with']:.1f} "
             f"(without {q['mean_running_paged_without']:.1f} vs {q['mean_running_contiguous_without']:.1f})"
             for q in rows]
    return head + ": " + "; ".join(parts)


def _title(workload):
    keys = ("experiment", "system_prompt_len", "system_prompts", "arrival_rate", "prompt_len", "output_len",
            "budget_bytes")
    return ", ".join(f"{k}={workload[k]}" for k in keys if k in workload)


def _over_steps(doc, out_dir, name, ylabel, series):
    import matplotlib.pyplot as plt

    grouped = list(groups(doc).items())
    if not grouped:
        return None
    fig, axes = plt.subplots(len(grouped), 1, figsize=(9, 3.2 * len(grouped)), squeeze=False)
    for ax, (key, points) in zip(axes[:, 0], grouped):
        for p in points:
            x, y = series(p["trace"]["steps"])
            ax.plot(x, y, label=pool_label(p), linewidth=1)
        ax.set_xlabel("decode step")
        ax.set_ylabel(ylabel)
        ax.set_title(_title({k: json.loads(v) for k, v in key}), fontsize=8)
        ax.legend(fontsize=7)
    return save(fig, os.path.join(out_dir, name))


def _concurrency(steps):
    return list(range(len(steps["running"]))), steps["running"]


def _step_time(steps):
    pts = [(i, us) for i, (n, us) in enumerate(zip(steps["running"], steps["gpu_us"])) if n > 0]
    return [i for i, _ in pts], [us for _, us in pts]


def _tokens_per_s(steps):
    """Tokens over GPU time in windows of WINDOW steps (one point per window)."""
    x, y = [], []
    running, gpu = steps["running"], steps["gpu_us"]
    for start in range(0, len(running), WINDOW):
        tokens, us = sum(running[start:start + WINDOW]), sum(gpu[start:start + WINDOW])
        if us > 0:
            x.append(start + WINDOW / 2)
            y.append(tokens / us * 1e6)
    return x, y


def concurrency_over_steps(doc, out_dir, note):
    return _over_steps(doc, out_dir, "serving_concurrency", "running sequences", _concurrency)


def step_time_over_steps(doc, out_dir, note):
    return _over_steps(doc, out_dir, "serving_step_time", "decode step GPU time (us)", _step_time)


def tokens_per_s_over_steps(doc, out_dir, note):
    return _over_steps(doc, out_dir, "serving_tokens_per_s", f"tokens/s (windows of {WINDOW} steps)", _tokens_per_s)


def summary_figure(doc, out_dir, note):
    """Tokens/s per pool, one panel per workload, each bar labelled with the paged ratio."""
    import matplotlib.pyplot as plt

    table = summary(doc)
    if not table:
        return None
    fig, axes = plt.subplots(1, len(table), figsize=(4.5 * len(table), 3.6), squeeze=False)
    for ax, g in zip(axes[0], table):
        labels = list(g["pools"])
        values = [g["pools"][k]["tokens_per_s"] / 1e6 for k in labels]
        ax.bar(range(len(labels)), values, color=["C1" if k.startswith("paged") else "C0" for k in labels])
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("tokens/s (millions, over GPU step time)")
        for c in g["comparisons"]:
            for q in c["pairs"]:
                if q["ratio"] is not None:
                    i = labels.index(q["contiguous"])
                    ax.annotate(f"{c['paged']}\nx{q['ratio']:.2f}", (i, values[i]), ha="center", va="bottom",
                                fontsize=6)
        ax.set_title(_title(g["workload"]), fontsize=7)
    return save(fig, os.path.join(out_dir, "serving_summary"))


def write_summary(doc, out_dir):
    """serving_summary.json and serving_summary.md; returns their paths (None without traces)."""
    table = summary(doc)
    if not table:
        return None
    os.makedirs(out_dir, exist_ok=True)
    path_json = os.path.join(out_dir, "serving_summary.json")
    with open(path_json, "w", encoding="utf-8") as f:
        json.dump(table, f, indent=2)
    lines = ["# Serving traces: paged against contiguous", ""]
    for g in table:
        lines += [f"## {_title(g['workload'])}", "",
                  "| pool | tokens/s | mean running | peak running | p50 step (us) | p99 step (us) | host / GPU "
                  "| exposed host / GPU |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for label, s in g["pools"].items():
            # exposed_host_over_gpu: the host time the GPU waited for (files before it have none).
            exposed = s.get("exposed_host_over_gpu")
            lines.append(f"| {label} | {s['tokens_per_s']:.0f} | {s['mean_running']:.1f} | {s['peak_running']} | "
                         f"{s['p50_step_us']:.1f} | {s['p99_step_us']:.1f} | {s['host_over_gpu']:.2f} | "
                         + (f"{exposed:.2f} |" if exposed is not None else "- |"))
        lines.append("")
        for c in g["comparisons"]:
            lines += [c["answer"], ""]
        if "system_prompt_effect" in g:
            lines += [g["system_prompt_effect"]["answer"], ""]
    path_md = os.path.join(out_dir, "serving_summary.md")
    with open(path_md, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return [path_json, path_md]


def make_serving_figures(doc, out_dir, note):
    if not trace_points(doc):
        note("serving", "no trace points (kernel = trace; `decode-bench sweep --preset serving --experiment trace`)")
        return {}
    made = {}
    for figure in (concurrency_over_steps, step_time_over_steps, tokens_per_s_over_steps, summary_figure):
        files = figure(doc, out_dir, note)
        if files:
            made[files[0].rsplit("/", 1)[-1].rsplit(".", 1)[0]] = files
    written = write_summary(doc, out_dir)
    if written:
        made["serving_summary_table"] = written
    return made
