#!/usr/bin/env bash
# ctest: the main job (scripts/run.sh) around a stand-in decode-bench, so no GPU is needed.
#  - no python3 with matplotlib: the sweep's results and table still come, run.sh exits with the
#    sweep's status (0), and it prints the one command that draws the figures later;
#  - a python3 with matplotlib: run.sh draws the figures through `decode-bench plot`;
#  - a failed sweep: run.sh exits with the sweep's status.
# Usage: run_main_job_check.sh SOURCE_DIR OUT_DIR
set -uo pipefail
src=$1 out=$2
rm -rf "$out" && mkdir -p "$out/build/sweeps" "$out/bin"
fail() { echo "FAIL: $*"; exit 1; }

# The stand-in: `sweep` writes a results file under --output-dir, prints a table and then the
# path (as the real sweep does); `plot` records its arguments. SWEEP_STATUS sets the exit status.
cat >"$out/build/sweeps/decode-bench" <<'SH'
#!/usr/bin/env bash
case $1 in
  sweep)
    shift; dir=results
    while [ $# -gt 0 ]; do [ "$1" = --output-dir ] && dir=$2; shift; done
    mkdir -p "$dir"; f=$dir/stand-in.json; echo '{"points": []}' >"$f"
    echo "point  median  GB/s"; echo "$f"; exit "${SWEEP_STATUS:-0}" ;;
  plot) echo "plot $*" >>"$PLOT_LOG"; echo "python: $DECODE_BENCH_PYTHON" >>"$PLOT_LOG"; exit 0 ;;
esac
exit 3
SH
chmod +x "$out/build/sweeps/decode-bench"
printf '#!/bin/sh\nexit 1\n' >"$out/bin/python-without-matplotlib"
printf '#!/bin/sh\nexit 0\n' >"$out/bin/python-with-matplotlib"
chmod +x "$out/bin/"*
export PLOT_LOG=$out/plot.log BUILD_DIR=$out/build

got=$(DB_FIGURE_PYTHONS="$out/bin/python-without-matplotlib" bash "$src/scripts/run.sh" --output-dir "$out/r1" 2>&1)
rc=$?
echo "$got"
[ "$rc" = 0 ] || fail "without matplotlib: exit $rc, expected the sweep's 0"
grep -q "point  median  GB/s" <<<"$got" || fail "the sweep's table did not reach the terminal"
grep -qF "figures: not drawn (no python3 with matplotlib here)" <<<"$got" || fail "no word on the missing figures"
grep -qxF "   $out/build/sweeps/decode-bench plot $out/r1/stand-in.json" <<<"$got" || fail "no command to draw them later"
[ -e "$PLOT_LOG" ] && fail "plot ran without matplotlib"

got=$(DB_FIGURE_PYTHONS="$out/bin/python-without-matplotlib $out/bin/python-with-matplotlib" \
      bash "$src/scripts/run.sh" --output-dir "$out/r2" 2>&1) || fail "with matplotlib: exit $?"
grep -qxF "plot plot $out/r2/stand-in.json" "$PLOT_LOG" || fail "plot not run on the results file: $(cat "$PLOT_LOG")"
grep -qxF "python: $out/bin/python-with-matplotlib" "$PLOT_LOG" || fail "plot not given the python3 that has matplotlib"
grep -qF "figures: $out/r2/stand-in-figures/" <<<"$got" || fail "no word on where the figures are"

SWEEP_STATUS=1 DB_FIGURE_PYTHONS="$out/bin/python-without-matplotlib" bash "$src/scripts/run.sh" --output-dir "$out/r3" >/dev/null 2>&1
rc=$?
[ "$rc" = 1 ] || fail "a failed sweep: exit $rc, expected 1"
echo "run_main_job: ok"
