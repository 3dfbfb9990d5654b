#!/usr/bin/env python3
"""The test tiers of tests/test_tiers.cmake against the tests ctest knows and the test sources.

Usage: test_tiers_check.py SOURCE_DIR BUILD_DIR CTEST QUICK SANITIZE
QUICK and SANITIZE are the tiers' gtest patterns, ':'-separated. Fails (exit 1, naming each test)
when a test has neither or both of the labels host and gpu; a gtest test is labelled gpu while its
suite's name does not end in Gpu (GpuDeathTest for death tests) or the other way round; gpu_quick
holds a test outside gpu, gpu_sanitize one outside gpu_quick; a pattern of a list matches no test
of its tier; a test that calls a DB_REQUIRE_* macro (DB_REQUIRE_GPU() and its wrappers) is in a
suite not so named, or such a suite's test calls none.
"""
import fnmatch
import json
import pathlib
import re
import subprocess
import sys

TEST_MACRO = re.compile(r"^\s*(TEST|TEST_F|TEST_P)\(\s*(\w+)\s*,\s*(\w+)\s*\)", re.M)


def gpu_suite(suite):
    """The rule of tests/test_tiers.cmake: a GPU suite's name ends in Gpu (death tests: GpuDeathTest)."""
    return suite.endswith("Gpu") or suite.endswith("GpuDeathTest")


def ctest_labels(build_dir, ctest):
    out = subprocess.run([ctest, "--test-dir", build_dir, "--show-only=json-v1"], check=True,
                         capture_output=True, text=True).stdout
    tests = {}
    for test in json.loads(out)["tests"]:
        labels = []
        for prop in test.get("properties", []):
            if prop["name"] == "LABELS":
                labels = prop["value"]
        command = test.get("command", [])
        gtest = next((arg[len("--gtest_filter="):] for arg in command if arg.startswith("--gtest_filter=")), None)
        tests[test["name"]] = (set(labels), gtest)
    return tests


def body_after(text, start):
    """The text of the brace-balanced block that opens at or after `start` (strings and comments skipped)."""
    i = text.index("{", start)
    depth, j = 0, i
    while j < len(text):
        c = text[j]
        if text.startswith("//", j):
            j = text.find("\n", j)
            j = len(text) if j < 0 else j
            continue
        if text.startswith("/*", j):
            j = text.find("*/", j) + 2
            continue
        if c in "\"'":
            k = j + 1
            while k < len(text) and text[k] != c:
                k += 2 if text[k] == "\\" else 1
            j = k + 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[i:j + 1]
        j += 1
    return text[i:]


def source_problems(source_dir):
    problems = []
    for path in sorted(pathlib.Path(source_dir, "tests").glob("*.cpp")):
        text = path.read_text()
        for m in TEST_MACRO.finditer(text):
            suite, name = m.group(2), m.group(3)
            requires_gpu = re.search(r"\bDB_REQUIRE_\w+\(\)", body_after(text, m.end())) is not None
            if requires_gpu and not gpu_suite(suite):
                problems.append(f"{path.name}: {suite}.{name} calls DB_REQUIRE_*() but its suite's name does not "
                                f"end in Gpu (it would be labelled host): rename the suite (e.g. {suite}Gpu)")
            if gpu_suite(suite) and not requires_gpu:
                problems.append(f"{path.name}: {suite}.{name} is in a *Gpu suite but calls no DB_REQUIRE_*() "
                                "(it must skip where no GPU is)")
    return problems


def main():
    source_dir, build_dir, ctest, quick, sanitize = sys.argv[1:6]
    tests = ctest_labels(build_dir, ctest)
    problems = []
    for name, (labels, gtest) in sorted(tests.items()):
        tiers = labels & {"host", "gpu"}
        if len(tiers) != 1:
            problems.append(f"{name}: labels {sorted(labels)} (exactly one of host and gpu expected)")
        if gtest is not None and ("gpu" in labels) != gpu_suite(gtest.split(".")[0]):
            problems.append(f"{name}: labels {sorted(labels)} do not follow its suite's name")
        if "gpu_quick" in labels and "gpu" not in labels:
            problems.append(f"{name}: gpu_quick without gpu")
        if "gpu_sanitize" in labels and "gpu_quick" not in labels:
            problems.append(f"{name}: gpu_sanitize without gpu_quick")
    for label, patterns in (("gpu_quick", quick), ("gpu_sanitize", sanitize)):
        names = [n for n, (labels, _) in tests.items() if label in labels]
        for pattern in filter(None, patterns.split(":")):
            if not fnmatch.filter(names, pattern):
                problems.append(f"{label}: '{pattern}' matches no test (renamed or removed?)")
    if not any("gpu" in labels for labels, _ in tests.values()):
        problems.append("no test is labelled gpu")
    problems += source_problems(source_dir)
    counts = {label: sum(label in labels for labels, _ in tests.values())
              for label in ("host", "gpu", "gpu_quick", "gpu_sanitize")}
    print("tests by label: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + f" (of {len(tests)})")
    for p in problems:
        print("PROBLEM: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
