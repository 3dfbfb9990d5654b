#!/usr/bin/env python3
"""The serving summary (plots/decode_bench_plots/serving_figures.py) on a SYNTHETIC results file
of four trace points whose answer is known in closed form: paged tokens/s over each contiguous
pool's, where paged wins from, the step-time ratio at equal batch size; then plot_results.py
draws the serving figures and writes the summary from the same file.
    serving_summary_check.py SOURCE_DIR WORK_DIR"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matplotlib_python  # noqa: E402

matplotlib_python.require()


def trace_point(layout, running, gpu_us, fragmentation=None, page_size=16, experiment="trace", system_prompt_len=None):
    tokens, gpu = sum(running), sum(gpu_us)
    busy = sorted(us for n, us in zip(running, gpu_us) if n > 0)
    params = {"kernel": "trace", "layout": layout, "dtype": "fp16", "requests": 100, "arrival_rate": 1.0}
    if system_prompt_len is not None:
        params["system_prompt_len"] = system_prompt_len
        params["system_prompts"] = 2 if system_prompt_len else 1
    if layout == "paged":
        params["page_size"] = page_size
    else:
        params["fragmentation"] = float(fragmentation)
    n = len(running)
    return {
        "id": f"{experiment}/kernel=trace/layout={layout}/{fragmentation or page_size}",
        "experiment": experiment, "parameters": params, "status": "ok",
        "verification": {"passed": True, "max_abs_error": 0.0, "max_rel_error": 0.0, "tolerance": 1e-3},
        "trace": {
            "steps": {"running": running, "gpu_us": gpu_us, "host_us": [1.0] * n, "queued": [0] * n},
            "summary": {"steps": n, "tokens": tokens, "tokens_per_s": tokens / gpu * 1e6,
                        "mean_running": tokens / n, "peak_running": max(running),
                        "p50_step_us": busy[(len(busy) + 1) // 2 - 1], "p99_step_us": busy[-1],
                        "host_over_gpu": n / gpu},
        },
    }


def document(points):
    return {"schema_version": "1.2", "meta": {"synthetic": True, "command": "synthetic"},
            "device": {"name": "SYNTHETIC GPU"}, "ceilings": {}, "points": points}


def check(cond, what):
    if not cond:
        print(f"serving_summary_check: FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def close(a, b):
    return a is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b))


def main():
    source, work = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(source, "plots"))
    from decode_bench_plots import serving_figures as sf

    # contiguous x2: 10 running at 100 us (100,000 tokens/s); x4: 5 at 60 us; x8: 2 at 40 us;
    # paged: 8 at 90 us then 10 at 110 us (900 tokens in 10,000 us: 90,000 tokens/s).
    points = [
        trace_point("contiguous", [10] * 100, [100.0] * 100, fragmentation=2),
        trace_point("contiguous", [5] * 100, [60.0] * 100, fragmentation=4),
        trace_point("contiguous", [2] * 100, [40.0] * 100, fragmentation=8),
        trace_point("paged", [8] * 50 + [10] * 50, [90.0] * 50 + [110.0] * 50),
    ]
    table = sf.summary(document(points))
    check(len(table) == 1, f"one workload, got {len(table)}")
    comparisons = table[0]["comparisons"]
    check(len(comparisons) == 1 and comparisons[0]["paged"] == "paged p16", "one paged pool")
    pairs = comparisons[0]["pairs"]
    check([q["contiguous"] for q in pairs] == ["contiguous x2", "contiguous x4", "contiguous x8"], "pairs in order")
    check(close(pairs[0]["ratio"], 0.9), f"x2 ratio 0.9, got {pairs[0]['ratio']}")
    check(close(pairs[1]["ratio"], 90000 / (5 / 60e-6)), f"x4 ratio 1.08, got {pairs[1]['ratio']}")
    check(close(pairs[2]["ratio"], 1.8), f"x8 ratio 1.8, got {pairs[2]['ratio']}")
    check([q["paged_wins"] for q in pairs] == [False, True, True], "paged loses at x2, wins at x4 and x8")
    check(comparisons[0]["paged_wins_from_fragmentation"] == 4.0, "paged wins from fragmentation 4")
    check(close(pairs[0]["equal_batch_step_ratio"], 1.1) and pairs[0]["equal_batch_sizes"] == 1,
          "at the common batch of 10: 110 us against 100 us")
    check(pairs[1]["equal_batch_step_ratio"] is None and pairs[1]["equal_batch_sizes"] == 0, "no common batch with x4")
    check(close(pairs[0]["concurrency_ratio"], 0.9), "mean running 9 against 10")
    check("wins on throughput from fragmentation 4 on, by x1.08" in comparisons[0]["answer"], comparisons[0]["answer"])

    # Not monotone: a win at x2 that x4 takes back does not count; nothing won gives None.
    odd = [trace_point("contiguous", [1] * 10, [100.0] * 10, fragmentation=2),
           trace_point("contiguous", [9] * 10, [10.0] * 10, fragmentation=4),
           trace_point("contiguous", [1] * 10, [100.0] * 10, fragmentation=8),
           trace_point("paged", [2] * 10, [100.0] * 10)]
    c = sf.summary(document(odd))[0]["comparisons"][0]
    check([q["paged_wins"] for q in c["pairs"]] == [True, False, True], "win, loss, win")
    check(c["paged_wins_from_fragmentation"] == 8.0, "wins from 8 only")
    never = [trace_point("contiguous", [9] * 10, [10.0] * 10, fragmentation=2), trace_point("paged", [2] * 10, [100.0] * 10)]
    c = sf.summary(document(never))[0]["comparisons"][0]
    check(c["paged_wins_from_fragmentation"] is None and "does not win" in c["answer"], "never wins")
    # Two workloads (another experiment) stay apart.
    two = points + [trace_point("paged", [1] * 5, [10.0] * 5, experiment="other")]
    check(len(sf.summary(document(two))) == 2, "a second experiment is a second workload")

    # A shared system prompt beside its twin without one: paged x4 / 2 = x2.0 with it against
    # x0.9 without (contiguous x2 at 10 running, 100 us).
    base = [trace_point("contiguous", [10] * 10, [100.0] * 10, fragmentation=2, system_prompt_len=0),
            trace_point("paged", [9] * 10, [100.0] * 10, system_prompt_len=0)]
    shared = [trace_point("contiguous", [5] * 10, [100.0] * 10, fragmentation=2, system_prompt_len=512),
              trace_point("paged", [20] * 10, [200.0] * 10, system_prompt_len=512)]
    table = sf.summary(document(base + shared))
    check(len(table) == 2, "with and without the prompt are two workloads")
    check("system_prompt_effect" not in table[0], "the workload without a prompt has no effect entry")
    effect = table[1]["system_prompt_effect"]
    check(effect["system_prompt_len"] == 512 and effect["system_prompts"] == 2, "the prompt named")
    check(len(effect["pairs"]) == 1, "one pool pair in both")
    q = effect["pairs"][0]
    check(close(q["ratio_with"], 2.0) and close(q["ratio_without"], 0.9), f"x2.0 with, x0.9 without: {q}")
    check(q["mean_running_paged_with"] == 20 and q["mean_running_contiguous_with"] == 5, "concurrency with the prompt")
    check("x2.00 (without x0.90)" in effect["answer"], effect["answer"])

    # The summary table: host / GPU per pool, and the exposed host time where the point has it
    # (host_overlap traces), "-" where it has none (files written before the field).
    os.makedirs(work, exist_ok=True)
    overlapped = [dict(p) for p in points]
    overlapped[3] = json.loads(json.dumps(points[3]))
    overlapped[3]["trace"]["summary"]["exposed_host_over_gpu"] = 0.046
    md_path = sf.write_summary(document(overlapped), os.path.join(work, "table"))[1]
    with open(md_path, encoding="utf-8") as f:
        rows = {line.split(" | ")[0]: line for line in f.read().splitlines() if line.startswith("| ")}
    check(rows["| paged p16"].endswith(f"| {100 / 10000:.2f} | 0.05 |"), rows["| paged p16"])
    check(rows["| contiguous x2"].endswith(f"| {100 / 10000:.2f} | - |"), rows["| contiguous x2"])

    # The figures and the summary files through plot_results.py.
    path = os.path.join(work, "synthetic_serving.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document(points), f)
    out = os.path.join(work, "figures")
    python = os.environ.get("DECODE_BENCH_PYTHON", sys.executable)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("serving_summary_check: matplotlib missing: figures not drawn (the summary was checked)")
        return 0
    subprocess.run([python, os.path.join(source, "plots", "plot_results.py"), path, "--out", out], check=True)
    for name in ("serving_concurrency", "serving_step_time", "serving_tokens_per_s", "serving_summary"):
        check(os.path.exists(os.path.join(out, name + ".png")), f"{name}.png drawn")
    with open(os.path.join(out, "serving_summary.json"), encoding="utf-8") as f:
        written = json.load(f)
    check(written[0]["comparisons"][0]["paged_wins_from_fragmentation"] == 4.0, "the written summary's answer")
    with open(os.path.join(out, "figures.json"), encoding="utf-8") as f:
        figures = json.load(f)
    check(figures["descriptions"]["serving_concurrency"]["axes"][0]["ylabel"] == "running sequences", "labelled axes")
    print("serving_summary_check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
