#!/usr/bin/env bash
# ctest: scripts/ncu_crosscheck.py on the H100 self-test outputs of c27d8b9 (tests/data/ncu_crosscheck):
# the known verdicts come out (exact instruction counts, DRAM reads within 0.01%, the four
# cache-state differences flagged, exit 1), and an input without kernels is refused by name.
set -euo pipefail
src=$1 out=$2
data=$src/tests/data/ncu_crosscheck
mkdir -p "$out"
set +e
python3 "$src/scripts/ncu_crosscheck.py" "$data/selftest.log" "$data/ncu.csv" > "$out/report.txt"
rc=$?
set -e
[ "$rc" = 1 ] || { echo "expected exit 1 (metrics outside 2%), got $rc"; cat "$out/report.txt"; exit 1; }
expect() { grep -Eq "$1" "$out/report.txt" || { echo "missing: $1"; cat "$out/report.txt"; exit 1; }; }
expect '^selftest_stream_read +dram__bytes_read.sum +1.07376e\+09 +1.07375e\+09 +0.0000  ok$'
expect '^selftest_ffma_loop +sm__sass_thread_inst_executed_op_ffma_pred_on.sum .* 0.0000  ok$'
expect '^selftest_stream_read +dram__bytes_write.sum .*OFF by more than 2%$'
expect '^selftest_hfma2_loop +dram__bytes_read.sum .*noise'
expect '^4 significant metric\(s\) outside 2%$'
# An ncu file with no self-test kernels: a clear refusal, not an empty table.
echo '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"' > "$out/empty.csv"
if python3 "$src/scripts/ncu_crosscheck.py" "$data/selftest.log" "$out/empty.csv" > "$out/empty.txt" 2>&1; then
  echo "an ncu file without kernels was accepted"; exit 1
fi
grep -q "no kernels found" "$out/empty.txt" || { echo "unclear refusal:"; cat "$out/empty.txt"; exit 1; }
echo "ncu_crosscheck: ok"
