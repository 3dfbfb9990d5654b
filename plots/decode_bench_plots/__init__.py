"""decode-bench figures: read results JSON only (docs/results.md), write PNG + SVG and a report."""
