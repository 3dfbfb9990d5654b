#!/usr/bin/env python3
"""Figures and a report from decode-bench results JSON (reads the JSON only).

    plot_results.py RESULTS.json [MORE.json ...] --out DIR

Writes DIR/<figure>.png and .svg for every figure whose data is present (figures without data are
skipped with a printed note), DIR/report.md and DIR/figures.json (made and skipped figures).
Exit codes: 0 done, 2 malformed or unreadable results file (the message names file and field).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from decode_bench_plots.load import ResultsError, load_many  # noqa: E402
from decode_bench_plots.paper_figures import make_paper_figures  # noqa: E402
from decode_bench_plots.report import write_report  # noqa: E402
from decode_bench_plots.roofline import make_rooflines  # noqa: E402
from decode_bench_plots.shared_prefix_figures import make_shared_prefix_figures  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="results JSON file(s); points are combined")
    parser.add_argument("--out", required=True, help="output directory")
    args = parser.parse_args(argv)
    try:
        doc = load_many(args.results)
    except ResultsError as e:
        print(f"plot_results: error: {e}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    skipped = {}

    def note(name, why):
        skipped[name] = why
        print(f"plot_results: skipped {name}: {why}")

    figures = {}
    figures.update(make_rooflines(doc, args.out, note))
    figures.update(make_paper_figures(doc, args.out, note))
    figures.update(make_shared_prefix_figures(doc, args.out, note))
    report = write_report(doc, args.out, figures, skipped, args.results)
    with open(os.path.join(args.out, "figures.json"), "w", encoding="utf-8") as f:
        json.dump({"figures": figures, "skipped": skipped, "report": report}, f, indent=2)
    for name, files in figures.items():
        print(f"plot_results: wrote {', '.join(files)}")
    print(f"plot_results: wrote {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
