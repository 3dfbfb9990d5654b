#!/usr/bin/env python3
"""scripts/flush_method_table.py on two small synthetic results files: the pairing and the
difference in closed form, and the refusal (exit non-zero, the point and mode named) when a file
was timed in the other mode.

  python3 tests/flush_method_table_check.py SOURCE_DIR WORK_DIR
"""
import json
import pathlib
import subprocess
import sys

src, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
script = src / "scripts" / "flush_method_table.py"


def results(mode, medians):
    points = []
    for i, (backend, us) in enumerate(medians):
        points.append({"id": f"e/backend={backend}/T={1024 * (i + 1)}/timing={mode}", "experiment": "e",
                       "status": "ok", "backend": {"name": backend},
                       "parameters": {"T": 1024 * (i + 1), "batch": 4, "timing": mode, "backend": backend},
                       "timing": {"median_us": us}})
    return {"meta": {"git": {"sha": "0123456789abcdef"}}, "device": {"name": "test GPU"}, "points": points}


def write(name, doc):
    path = work / name
    path.write_text(json.dumps(doc))
    return str(path)


cold = write("cold.json", results("cold", [("a", 100.0), ("b", 50.0)]))
cold_write = write("cold_write.json", results("cold_write", [("a", 110.0), ("b", 52.5)]))

ok = subprocess.run([sys.executable, str(script), cold, cold_write], capture_output=True, text=True)
assert ok.returncode == 0, ok.stderr
assert "| 100.0 | 110.0 | +10.0 | 1.100 |" in ok.stdout, ok.stdout
assert "| 50.0 | 52.5 | +2.5 | 1.050 |" in ok.stdout, ok.stdout
assert "- a: 1 points, median difference +10.0 us" in ok.stdout, ok.stdout
only_b = subprocess.run([sys.executable, str(script), cold, cold_write, "--backend", "b"], capture_output=True,
                        text=True)
assert only_b.returncode == 0 and "+10.0" not in only_b.stdout and "+2.5" in only_b.stdout, only_b.stdout

swapped = subprocess.run([sys.executable, str(script), cold_write, cold], capture_output=True, text=True)
assert swapped.returncode != 0, swapped.stdout
assert "was timed cold_write, not cold" in swapped.stderr, swapped.stderr
print("flush_method_table_check: ok")
