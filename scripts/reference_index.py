#!/usr/bin/env python3
"""The index of the committed reference runs, written from the files themselves.

  python3 scripts/reference_index.py --write   # rewrite the index in results/reference/README.md
  python3 scripts/reference_index.py --check   # exit 1 with a diff when it disagrees with the files

For every results/reference/<folder>/*.json: its device, the command that wrote it (meta.command),
the commit it was built from (meta.git; a file whose sha is "unknown" is refused) and its points
by status; for every <folder>/compare/*.md:
the command on its first line (an HTML comment, as scripts/reference_runs.sh writes it). The table
sits between `<!-- generated:runs begin -->` and `<!-- generated:runs end -->`. Plain python3.
"""
import argparse
import collections
import difflib
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
REF = ROOT / "results" / "reference"
README = REF / "README.md"
BEGIN, END = "<!-- generated:runs begin -->", "<!-- generated:runs end -->"


def fail(msg):
    sys.exit(f"reference_index: {msg}")


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def commit_of(meta):
    git = meta.get("git")
    if not isinstance(git, dict):
        return "-"
    sha = str(git.get("sha") or "unknown")
    short = sha[:7] if sha != "unknown" else sha
    return short + (" (dirty)" if git.get("dirty") else "")


def points_of(doc):
    if "ceilings" in doc and not doc.get("points"):
        names = sorted(k for k, v in doc["ceilings"].items() if isinstance(v, dict))
        floor = (doc["ceilings"].get("dram_read") or {}).get("floor")
        return f"{len(names)} ceilings" + (" and the read floor" if floor else "")
    points = doc.get("points", [])
    if points and not any("status" in p for p in points):
        return f"{len(points)} shapes"  # a peer's timings: no verification, no status
    counts = collections.Counter(p.get("status", "?") for p in points)
    if not counts:
        return "0"
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))


def json_row(path):
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        fail(f"{path.relative_to(ROOT)}: not a readable JSON document: {e}")
    meta = doc.get("meta") or {}
    device = doc.get("device", {}).get("name") if isinstance(doc.get("device"), dict) else meta.get("device")
    command = meta.get("command") or "-"
    env = meta.get("environment") or {}
    if env:
        command = " ".join(f"{k}={v}" for k, v in sorted(env.items())) + " " + command
    commit = commit_of(meta)
    if commit.startswith("unknown"):
        fail(f"{path.relative_to(ROOT)}: meta.git.sha is unknown: a run that cannot name its commit "
             "is not committed (results/reference/README.md)")
    if commit == "-" and meta.get("peer"):
        commit = f"- ({meta['peer']}, torch {meta.get('torch', '?')})"
    rel = path.relative_to(REF)
    return f"| `{rel}` | {cell(device or '-')} | `{cell(command)}` | {cell(commit)} | {cell(points_of(doc))} |"


def compare_row(path):
    first = path.read_text().splitlines()[:1]
    if not first or not (first[0].startswith("<!--") and first[0].endswith("-->")):
        fail(f"{path.relative_to(ROOT)}: the first line must be the command as an HTML comment")
    return f"| `{path.relative_to(REF)}` | `{cell(first[0][4:-3].strip())}` |"


def table():
    runs, compares = [], []
    for folder in sorted(p for p in REF.iterdir() if p.is_dir()):
        runs += [json_row(f) for f in sorted(folder.glob("*.json"))]
        compares += [compare_row(f) for f in sorted((folder / "compare").glob("*.md"))]
    lines = ["| file | device | command | commit | points |", "| --- | --- | --- | --- | --- |", *runs]
    if compares:
        lines += ["", "| table | command |", "| --- | --- |", *compares]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = README.read_text()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        fail(f"{README.relative_to(ROOT)}: needs one {BEGIN} ... {END} region")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{table()}\n{END}{tail}"
    if args.write:
        if new != text:
            README.write_text(new)
        return 0
    if new != text:
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                   "README.md (committed)", "README.md (from the files)"))
        print("reference_index: results/reference/README.md disagrees with the files; "
              "run python3 scripts/reference_index.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
