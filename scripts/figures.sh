# Sourced by scripts/run.sh: draws a results file's figures when some python3 here has matplotlib,
# and otherwise says how to draw them later. Figures never decide the main job's exit status: a
# GPU machine without matplotlib, or without a package network to install it, still measures.
#   db_draw_figures BIN RESULTS.json
# Candidates, in order: $DECODE_BENCH_PYTHON, /usr/bin/python3, python3 on PATH (the order
# `decode-bench plot` uses); DB_FIGURE_PYTHONS replaces the list (tests use it).

db_python_with_matplotlib() {
  local p
  for p in ${DB_FIGURE_PYTHONS-"${DECODE_BENCH_PYTHON:-} /usr/bin/python3 python3"}; do
    if [ -n "$p" ] && "$p" -c 'import matplotlib' >/dev/null 2>&1; then echo "$p"; return 0; fi
  done
  return 1
}

db_draw_figures() {
  local bin=$1 results=$2 python
  local later="$bin plot $results"
  if ! python=$(db_python_with_matplotlib); then
    echo "== figures: not drawn (no python3 with matplotlib here). Draw them later, on any machine with"
    echo "   python3-matplotlib (apt-get install python3-matplotlib, or pip install matplotlib):"
    echo "   $later"
    return 0
  fi
  if DECODE_BENCH_PYTHON=$python "$bin" plot "$results" > "${results%.json}-plot.log" 2>&1; then
    echo "== figures: ${results%.json}-figures/ (report.md lists them)"
  else
    echo "== figures: plotting failed (${results%.json}-plot.log); the results file is complete. Retry with:"
    echo "   $later"
  fi
  return 0
}
