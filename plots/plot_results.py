#!/usr/bin/env python3
"""Figures and a report from decode-bench results JSON (reads the JSON only).

    plot_results.py RESULTS.json [MORE.json ...] --out DIR
    plot_results.py A.json B.json --compare-report REPORT.json --out DIR

The second form (what `decode-bench plot A.json B.json --compare` runs, REPORT.json from
`decode-bench compare --json-out`) draws compare_ratio_by_experiment and roofline_compare.

Writes DIR/<figure>.png and .svg for every figure whose data is present (figures without data are
skipped with a printed note), DIR/report.md and DIR/figures.json (made and skipped figures).
Exit codes: 0 done, 2 malformed or unreadable results file (the message names file and field).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from decode_bench_plots.backend_figures import make_backend_figures  # noqa: E402
from decode_bench_plots.compare_figures import make_compare_figures  # noqa: E402
from decode_bench_plots.load import ResultsError, load_many, load_results  # noqa: E402
from decode_bench_plots.paper_figures import make_paper_figures  # noqa: E402
from decode_bench_plots.report import write_report  # noqa: E402
from decode_bench_plots.roofline import make_rooflines  # noqa: E402
from decode_bench_plots.serving_figures import make_serving_figures  # noqa: E402
from decode_bench_plots.shared_prefix_figures import make_shared_prefix_figures  # noqa: E402
from decode_bench_plots.style import DESCRIPTIONS, set_caption  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="results JSON file(s); points are combined")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--compare-report", help="JSON report of `decode-bench compare` for the two results files")
    args = parser.parse_args(argv)
    if args.compare_report:
        return compare_main(args)
    try:
        doc = load_many(args.results)
    except ResultsError as e:
        print(f"plot_results: error: {e}", file=sys.stderr)
        return 2
    skipped, note = _start(args.out)
    set_caption(doc)
    figures = {}
    # Serving traces have step arrays, not one timing: the other figures and the report never see them.
    timed = dict(doc, points=[p for p in doc["points"] if "trace" not in p])
    figures.update(make_rooflines(timed, args.out, note))
    figures.update(make_paper_figures(timed, args.out, note))
    figures.update(make_shared_prefix_figures(timed, args.out, note))
    figures.update(make_backend_figures(timed, args.out, note))
    figures.update(make_serving_figures(doc, args.out, note))
    report = write_report(timed, args.out, figures, skipped, args.results)
    _finish(args.out, figures, skipped, report=report)
    print(f"plot_results: wrote {report}")
    return 0


def _start(out_dir):
    """Creates the output directory; returns the skipped-figure record and the `note` callback
    every figure function takes."""
    os.makedirs(out_dir, exist_ok=True)
    skipped = {}

    def note(name, why):
        skipped[name] = why
        print(f"plot_results: skipped {name}: {why}")

    return skipped, note


def _finish(out_dir, figures, skipped, **extra):
    """Writes figures.json (figures, skipped, extra fields, descriptions) and lists the files."""
    with open(os.path.join(out_dir, "figures.json"), "w", encoding="utf-8") as f:
        json.dump({"figures": figures, "skipped": skipped, **extra, "descriptions": DESCRIPTIONS}, f, indent=2)
    for files in figures.values():
        print(f"plot_results: wrote {', '.join(files)}")


def compare_main(args):
    if len(args.results) != 2:
        print("plot_results: error: --compare-report needs exactly two results files (A and B)", file=sys.stderr)
        return 2
    try:
        doc_a, doc_b = (load_results(p) for p in args.results)
        with open(args.compare_report, encoding="utf-8") as f:
            report = json.load(f)
        for key in ("points", "a", "b", "threshold"):
            if key not in report:
                raise ResultsError(f"{args.compare_report}: {key}: missing required field (not a compare report?)")
    except (OSError, json.JSONDecodeError) as e:
        print(f"plot_results: error: {args.compare_report}: {e}", file=sys.stderr)
        return 2
    except ResultsError as e:
        print(f"plot_results: error: {e}", file=sys.stderr)
        return 2
    skipped, note = _start(args.out)
    set_caption(doc_b, f"A: {doc_a['device']['name']}, commit {str(doc_a['meta'].get('git', {}).get('sha', '?'))[:12]}")
    _finish(args.out, make_compare_figures(report, doc_a, doc_b, args.out, note), skipped)
    return 0


if __name__ == "__main__":
    sys.exit(main())
