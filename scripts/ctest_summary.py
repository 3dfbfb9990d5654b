#!/usr/bin/env python3
"""One tier's markdown for scripts/gpu_check.sh's summary.md, from ctest's JUnit file.

Usage: ctest_summary.py JUNIT.xml TIER WALL_SECONDS [--log CTEST_LOG] [--slowest N]
Prints a heading line with the tier's passed / failed / skipped counts and wall seconds, the
failed tests (with ctest's reason, Failed, Timeout, SEGFAULT..., from its "The following tests
FAILED" list in CTEST_LOG when given), and the N slowest tests (default 10) with their seconds. A test is skipped when ctest did not run it or reported it skipped (a GPU
test without a GPU). Exit 0 when none failed and some passed, 1 otherwise, 2 when the file cannot
be read.
"""
import argparse
import re
import sys
import xml.etree.ElementTree as ET


def outcomes(path):
    """(name, seconds, outcome, reason) per test case; outcome is passed, failed or skipped."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "?")
        seconds = float(case.get("time", "0") or 0)
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        if failure is not None or case.get("status") == "fail":
            reason = failure.get("message", "") if failure is not None else ""
            cases.append((name, seconds, "failed", reason or "Failed"))
        elif case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            cases.append((name, seconds, "skipped", ""))
        else:
            cases.append((name, seconds, "passed", ""))
    return cases


def failure_reasons(log_path):
    """{test name: reason} from the "The following tests FAILED:" list of a ctest log."""
    reasons, listing = {}, False
    with open(log_path, errors="replace") as log:
        for line in log:
            if line.startswith("The following tests FAILED:"):
                listing = True
                continue
            m = re.match(r"^\s*\d+ - (.+) \(([^()]+)\)\s*$", line) if listing else None
            if m:
                reasons[m.group(1)] = m.group(2)
            elif listing and line.strip():
                listing = False
    return reasons


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit")
    parser.add_argument("tier")
    parser.add_argument("wall_seconds", type=float)
    parser.add_argument("--log", help="ctest's console output, for the failures' reasons")
    parser.add_argument("--slowest", type=int, default=10)
    args = parser.parse_args()
    try:
        cases = outcomes(args.junit)
        reasons = failure_reasons(args.log) if args.log else {}
    except (OSError, ET.ParseError) as e:
        print(f"ctest_summary.py: cannot read {e.filename or args.junit}: {e}", file=sys.stderr)
        return 2
    count = {k: sum(c[2] == k for c in cases) for k in ("passed", "failed", "skipped")}
    print(f"### {args.tier}: {count['passed']} passed, {count['failed']} failed, {count['skipped']} skipped "
          f"of {len(cases)}, {args.wall_seconds:.0f} s wall")
    print()
    failed = [c for c in cases if c[2] == "failed"]
    if failed:
        print("Failed:")
        print()
        for name, seconds, _, reason in failed:
            print(f"- `{name}` ({reasons.get(name, reason)}, {seconds:.1f} s)")
        print()
    slowest = sorted(cases, key=lambda c: -c[1])[: args.slowest]
    if slowest:
        print(f"Slowest {len(slowest)}:")
        print()
        print("| test | seconds | outcome |")
        print("|---|---:|---|")
        for name, seconds, outcome, _ in slowest:
            print(f"| `{name}` | {seconds:.2f} | {outcome} |")
        print()
    if not count["passed"]:
        print("Nothing passed: no test of this tier ran (no GPU, or no tests built?).")
        print()
    return 1 if failed or not count["passed"] else 0


if __name__ == "__main__":
    sys.exit(main())
