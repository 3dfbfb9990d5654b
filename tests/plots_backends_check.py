#!/usr/bin/env python3
"""ctest: the backends figure (plots/decode_bench_plots/backend_figures.py).

    plots_backends_check.py SOURCE_DIR OUT_DIR [DECODE_BENCH]

- backend_rows groups a small synthetic run as `show --by-backend` does (the cases of
  tests/test_backend_table.cpp: shapes paired across backends, statuses, the fastest, the order);
- plot_results.py draws backends_median_by_shape for the two-backend fixture
  (tests/data/synthetic_backends_results.json) and skips it, with a note, for a one-backend file;
- with DECODE_BENCH: backend_rows agrees row for row with `decode-bench show --by-backend --format
  json` on the fixture and on the pinned peer run (the shape key and the order are the
  C++ ones), and `decode-bench plot` draws the figure too.
Needs a python3 with matplotlib. Exit 0 passed, 1 failed.
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matplotlib_python  # noqa: E402

matplotlib_python.require()

SRC, OUT = sys.argv[1], sys.argv[2]
EXE = sys.argv[3] if len(sys.argv) > 3 else None
sys.path.insert(0, os.path.join(SRC, "plots"))

from decode_bench_plots.backend_figures import FIGURE, backend_rows, io_dtypes, shape_of  # noqa: E402

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)


def timed(pid, backend, median):
    p = {"id": pid, "experiment": pid.split("/")[0], "status": "ok", "timing": {"median_us": median}}
    if backend:
        p["parameters"] = {"backend": backend}
    return p


def untimed(pid, backend, status):
    return {"id": pid, "experiment": pid.split("/")[0], "status": status, "reason": "why",
            "parameters": {"backend": backend}}


def grouping():
    """test_backend_table.cpp's two_backends(): the same rows, cells and fastest."""
    check(shape_of({"id": "e/kernel=k/backend=flashinfer/T=8"}) == "e/kernel=k/T=8", "shape_of drops backend=")
    check(shape_of({"id": "e/kernel=k/T=8"}) == "e/kernel=k/T=8", "shape_of keeps an id without backend=")
    points = [timed("e/kernel=k/T=8", "decode-bench", 10.0), timed("e/kernel=k/backend=flashinfer/T=8", "flashinfer", 12.5),
              timed("e/kernel=k/T=16", "decode-bench", 20.0), untimed("e/kernel=k/backend=flashinfer/T=16", "flashinfer", "skipped"),
              untimed("e/kernel=k/T=32", "decode-bench", "verification_failed"),
              timed("e/kernel=k/backend=flashinfer/T=32", "flashinfer", 40.0),
              untimed("e/kernel=k/T=64", "decode-bench", "error"),
              untimed("e/kernel=k/backend=flashinfer/T=64", "flashinfer", "skipped"), timed("f/kernel=k/T=8", "", 5.0)]
    t = backend_rows(points)
    check(t["backends"] == ["decode-bench", "flashinfer"], f"backends {t['backends']}")
    got = [(r["experiment"], r["shape"], r["cells"], r["fastest"]) for r in t["rows"]]
    want = [("e", "e/kernel=k/T=8", {"decode-bench": ("ok", 10.0), "flashinfer": ("ok", 12.5)}, "decode-bench"),
            ("e", "e/kernel=k/T=16", {"decode-bench": ("ok", 20.0), "flashinfer": ("skipped", None)}, "decode-bench"),
            ("e", "e/kernel=k/T=32", {"decode-bench": ("failed", None), "flashinfer": ("ok", 40.0)}, "flashinfer"),
            ("e", "e/kernel=k/T=64", {"decode-bench": ("error", None), "flashinfer": ("skipped", None)}, None),
            ("f", "f/kernel=k/T=8", {"decode-bench": ("ok", 5.0)}, "decode-bench")]
    check(got == want, f"two-backend rows:\n  got  {got}\n  want {want}")
    # decode-bench first, then by name; a shape's rows come in file order, experiments by first appearance.
    t = backend_rows([timed("e/backend=zeta/T=8", "zeta", 3.0), timed("g/T=1", "", 1.0),
                      timed("e/backend=alpha/T=8", "alpha", 2.0), timed("e/T=8", "", 4.0), timed("e/T=4", "", 4.0)])
    check(t["backends"] == ["decode-bench", "alpha", "zeta"], f"backend order {t['backends']}")
    check([r["shape"] for r in t["rows"]] == ["e/T=8", "e/T=4", "g/T=1"], f"row order {[r['shape'] for r in t['rows']]}")
    check(t["rows"][0]["fastest"] == "alpha", f"fastest {t['rows'][0]['fastest']}")
    # The legend's io types: named only where the ok points differ (test_backend_table.cpp's case).
    io = lambda p, t: dict(p, backend={"io_dtype": t})  # noqa: E731
    mixed = [io(timed("e/T=8", "decode-bench", 10.0), "fp32"), io(timed("e/backend=fa/T=8", "fa", 9.0), "bf16"),
             io(timed("e/backend=fa/T=16", "fa", 9.0), "fp16"), io(untimed("e/T=16", "decode-bench", "skipped"), "fp16")]
    check(io_dtypes(mixed) == {"decode-bench": ["fp32"], "fa": ["bf16", "fp16"]}, f"io types {io_dtypes(mixed)}")
    same = [io(timed("e/T=8", "decode-bench", 10.0), "fp32"), io(timed("e/backend=fa/T=8", "fa", 9.0), "fp32")]
    check(io_dtypes(same) == {} and io_dtypes(points) == {}, "io types named where the points share one or record none")


def plot(args, out):
    shutil.rmtree(out, ignore_errors=True)
    cmd = ([EXE, "plot"] + args + ["--out", out]) if EXE else \
        [sys.executable, os.path.join(SRC, "plots", "plot_results.py")] + args + ["--out", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    check(r.returncode == 0, f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr}")
    with open(os.path.join(out, "figures.json"), encoding="utf-8") as f:
        return json.load(f)


def figures():
    data = os.path.join(SRC, "tests", "data")
    two = plot([os.path.join(data, "synthetic_backends_results.json")], os.path.join(OUT, "two"))
    for ext in ("png", "svg"):
        path = os.path.join(OUT, "two", f"{FIGURE}.{ext}")
        check(os.path.isfile(path) and os.path.getsize(path) > 0, f"missing or empty: {path}")
    desc = two["descriptions"].get(FIGURE)
    check(desc is not None, f"{FIGURE} not described in figures.json")
    if desc:
        # One panel per experiment, each axis label with its unit, no overlapping labels, the
        # device in the caption, and a legend naming both backends and the two kinds of absent bar.
        check([a["xlabel"] for a in desc["axes"]] == ["shape in kernels (varying parameters)",
                                                      "shape in paged (varying parameters)"], f"panels {desc['axes']}")
        check(all(re.search(r"\([^)]+\)", a[k]) for a in desc["axes"] for k in ("xlabel", "ylabel")), "axis without unit")
        check(desc["axes"][0]["ylabel"] == "median time (us, lower is better)", f"ylabel {desc['axes'][0]['ylabel']}")
        check(not desc["overlapping_labels"], f"overlapping labels {desc['overlapping_labels']}")
        check("Synthetic GPU" in desc["caption"], f"caption {desc['caption']}")
        check(desc["axes"][0]["legend"] == ["decode-bench", "flashinfer", "fastest (black edge)", "failed (no time)",
                                            "skipped (no time)"], f"legend {desc['axes'][0]['legend']}")
    one = plot([os.path.join(data, "synthetic_paper_results.json")], os.path.join(OUT, "one"))
    check(FIGURE not in one["figures"] and not os.path.exists(os.path.join(OUT, "one", f"{FIGURE}.png")),
          "one-backend file: the backends figure was drawn")
    check("one backend only (decode-bench)" in one["skipped"].get(FIGURE, ""), f"one-backend skip note: {one['skipped']}")


def agrees_with_show():
    """backend_rows against the C++ table, row for row."""
    for path in (os.path.join(SRC, "tests", "data", "synthetic_backends_results.json"),
                 os.path.join(SRC, "results", "reference", "h100", "peer.json")):
        r = subprocess.run([EXE, "show", path, "--by-backend", "--format", "json"], capture_output=True, text=True)
        check(r.returncode == 0, f"show --by-backend {path}: exit {r.returncode}: {r.stderr}")
        cpp = json.loads(r.stdout)
        with open(path, encoding="utf-8") as f:
            t = backend_rows(json.load(f)["points"])
        py = []
        for row in t["rows"]:
            o = {"shape": row["shape"], "experiment": row["experiment"], "fastest": row["fastest"]}
            for b in t["backends"]:
                status, median = row["cells"].get(b, (None, None))
                o[f"{b}_status"], o[f"{b}_median_us"] = status, median
            py.append(o)
        keys = lambda o: {k: v for k, v in o.items() if not k.endswith("_over_fastest")}  # noqa: E731
        check([keys(o) for o in cpp] == py, f"{path}: python rows differ from show --by-backend")
        check(len(t["backends"]) >= 2 and len(py) > 3, f"{path}: expected several backends and shapes")


grouping()
figures()
if EXE:
    agrees_with_show()
if FAILURES:
    print("\n".join(f"FAIL: {f}" for f in FAILURES))
    sys.exit(1)
print(f"plots backends ok: {OUT}")
