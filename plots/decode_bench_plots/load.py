"""Loading results documents with schema checks that name the offending field.

Mirrors harness/results_schema.cpp: a newer major version or a missing/mistyped required field is
rejected with its JSON path. Points with a "capacity" object (sweep points with kernel=capacity,
schema 1.1) need no timing. Several files can be combined: their points are concatenated.
"""
import json
import math

SUPPORTED_MAJOR = 1


class ResultsError(Exception):
    """A results file that cannot be plotted; the message names the file and the field."""


def _require(obj, path, key, kind, kind_name):
    if not isinstance(obj, dict) or key not in obj:
        raise ResultsError(f"{path + '.' if path else ''}{key}: missing required field")
    value = obj[key]
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    else:
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise ResultsError(f"{path + '.' if path else ''}{key}: must be {kind_name}")
    return value


def validate(doc):
    if not isinstance(doc, dict):
        raise ResultsError("$: a results document must be a JSON object")
    version = _require(doc, "", "schema_version", str, "a string")
    try:
        major = int(version.split(".")[0])
        int(version.split(".")[1])
    except (ValueError, IndexError):
        raise ResultsError(f"schema_version: '{version}' is not of the form MAJOR.MINOR") from None
    if major > SUPPORTED_MAJOR:
        raise ResultsError(f"schema_version: major version {major} is newer than this reader "
                           f"understands ({SUPPORTED_MAJOR}); upgrade decode-bench")
    for key, kind, name in (("meta", dict, "an object"), ("device", dict, "an object"),
                            ("ceilings", dict, "an object"), ("points", list, "an array")):
        _require(doc, "", key, kind, name)
    _require(doc["device"], "device", "name", str, "a string")
    for name, ceiling in doc["ceilings"].items():
        _require(ceiling, f"ceilings.{name}", "value", float, "a number")
        _require(ceiling, f"ceilings.{name}", "unit", str, "a string")
    for i, point in enumerate(doc["points"]):
        p = f"points[{i}]"
        if not isinstance(point, dict):
            raise ResultsError(f"{p}: must be an object")
        _require(point, p, "id", str, "a string")
        _require(point, p, "parameters", dict, "an object")
        status = _require(point, p, "status", str, "a string")
        if status not in ("ok", "verification_failed", "skipped", "error"):
            raise ResultsError(f"{p}.status: unknown status '{status}'")
        if status != "ok":
            continue
        if "trace" in point:  # a serving trace: step arrays and a summary, no single timing
            trace = _require(point, p, "trace", dict, "an object")
            steps = _require(trace, f"{p}.trace", "steps", dict, "an object")
            summary = _require(trace, f"{p}.trace", "summary", dict, "an object")
            for key in ("tokens_per_s", "mean_running", "peak_running", "p50_step_us", "p99_step_us", "host_over_gpu"):
                _require(summary, f"{p}.trace.summary", key, float, "a number")
            for key in ("running", "gpu_us"):
                _require(steps, f"{p}.trace.steps", key, list, "an array")
            if len(steps["running"]) != len(steps["gpu_us"]):
                raise ResultsError(f"{p}.trace.steps: running and gpu_us differ in length")
            continue
        if "capacity" in point:
            capacity = _require(point, p, "capacity", dict, "an object")
            for key in ("sequences", "bytes_reserved", "bytes_used", "fragmentation"):
                _require(capacity, f"{p}.capacity", key, float, "a number")
            continue
        _require(point, p, "timing", dict, "an object")
        _require(point["timing"], f"{p}.timing", "median_us", float, "a number")
        _require(point, p, "model", dict, "an object")
        _require(point["model"], f"{p}.model", "bytes", float, "a number")
        _require(point["model"], f"{p}.model", "flops", float, "a number")
        if "counters" in point:
            _require(point, p, "counters", dict, "an object")
    return doc


def load_results(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file") from None
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}: not valid JSON: {e}") from None
    try:
        return validate(doc)
    except ResultsError as e:
        raise ResultsError(f"{path}: {e}") from None


def load_many(paths):
    """The first document, with the points of all of them."""
    docs = [load_results(p) for p in paths]
    merged = dict(docs[0])
    merged["points"] = [pt for d in docs for pt in d["points"]]
    return merged


# --- accessors shared by the figure modules ---------------------------------------------------

def ok_points(doc):
    """Ok points with one timing or a capacity count (trace points are read apart: docs/results.md)."""
    return [p for p in doc["points"] if p["status"] == "ok" and "trace" not in p]


def experiment(point):
    return point.get("experiment") or point["parameters"].get("experiment") or "all"


def param(point, name, default=None):
    return point["parameters"].get(name, default)


def gbps(point):
    """Achieved GB/s: the sweep's number, else model bytes over median time."""
    achieved = point.get("achieved", {})
    if isinstance(achieved.get("gbps"), (int, float)):
        return float(achieved["gbps"])
    return point["model"]["bytes"] / (point["timing"]["median_us"] * 1e3)


def ceiling(doc, name):
    c = doc["ceilings"].get(name)
    return None if c is None else float(c["value"])
