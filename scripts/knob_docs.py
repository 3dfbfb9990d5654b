#!/usr/bin/env python3
"""docs/kernels.md's table of the planners' tuning knobs, written from the binary that parses them.

  python3 scripts/knob_docs.py --write --exe build/sweeps/decode-bench
  python3 scripts/knob_docs.py --check --exe build/sweeps/decode-bench

The region between `<!-- generated:knobs begin -->` and `<!-- generated:knobs end -->` is the
output of `decode-bench list knobs --format markdown`, which prints the knob table the planners'
policy is parsed with (kernels/tuning_policy.cpp), so the page cannot drift from the code.
--write rewrites the region; --check exits 1 with a diff when page and binary disagree, 2 on bad
input (no such binary, no region). Plain python3, no GPU.
"""
import argparse
import difflib
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "kernels.md"
BEGIN, END = "<!-- generated:knobs begin -->", "<!-- generated:knobs end -->"


class BadInput(Exception):
    pass


def knob_table(exe):
    args = [exe, "list", "knobs", "--format", "markdown"]
    try:
        res = subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=ROOT)
    except OSError as e:
        raise BadInput(f"--exe {exe}: cannot run: {e}")
    if res.returncode != 0:
        raise BadInput(f"`{' '.join(args)}` exited {res.returncode}: {res.stderr.strip()}")
    return res.stdout.rstrip("\n")


def rewrite(text, body):
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise BadInput(f"{PAGE.relative_to(ROOT)}: needs one {BEGIN} ... {END} region")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{body}\n{END}{tail}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    ap.add_argument("--exe", required=True, help="the decode-bench binary whose knob table the page quotes")
    args = ap.parse_args()
    text = PAGE.read_text()
    try:
        new = rewrite(text, knob_table(args.exe))
    except BadInput as e:
        print(f"knob_docs: {e}", file=sys.stderr)
        return 2
    if args.write:
        if new != text:
            PAGE.write_text(new)
        return 0
    if new != text:
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                   "docs/kernels.md (committed)", "docs/kernels.md (from the binary)"))
        print(f"knob_docs: docs/kernels.md disagrees with the binary's knob table; run "
              f"python3 scripts/knob_docs.py --write --exe {args.exe}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
