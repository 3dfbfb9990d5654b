#!/usr/bin/env bash
# ctest: scripts/block_timeline.py on a synthetic block timeline whose numbers are worked out by
# hand: point p (three launches on 2 SMs, rows out of launch order) and point q (one launch, two
# blocks overlapping on one SM, an empty block on a third SM that counts for nothing but the empty
# line); the --sm-gantt file; a wrong header, end before start, a non-integer time, a missing
# column, two kernels under one launch and a missing file are refused by name.
# Usage: block_timeline_check.sh SOURCE_DIR OUT_DIR
set -uo pipefail
src=$1 out=$2
rm -rf "$out" && mkdir -p "$out"
cat >"$out/t.csv" <<'CSV'
point,launch,kernel,block,smid,start_ns,first_tile_ns,loop_end_ns,end_ns
p,1,flash_decode,0,1,6000,,,12000
p,0,row_mma,0,0,0,1000,9000,10000
q,0,merge,0,0,0,500,3000,4000
p,0,row_mma,1,1,0,1000,5000,6000
p,2,merge,0,0,9000,,,11000
p,2,merge,1,0,11000,,,13000
q,0,merge,1,0,1000,1300,2800,3000
q,0,merge,2,1,2000,2900,3600,4000
q,0,merge,3,2,2500,,,
CSV
fail() { echo "FAIL: $*"; exit 1; }
bt="$src/scripts/block_timeline.py"
got=$(python3 "$bt" "$out/t.csv" --sm-gantt "$out/gantt.csv") || fail "exit status $?"
echo "$got"
has() { grep -qxF -- "$1" <<<"$got" || fail "missing line: $1"; }
# p, launch 0: SM 0 [0, 10] us, SM 1 [0, 6]; busy (10 + 6) / (2 SMs x 10) = 0.800; ramp and
# epilogue 1 us each; 2 blocks run until 6, then 1 (< 0.9 x 2): tail 10 - 6 = 4.0.
has '| 0 | row_mma | 2 | 2 | 0.0 | 0.0 | 10.0 | 10.0 | 0.800 | 1.0 | 1.0 | 4.0 |'
# launch 1: one block on SM 1 [6, 12]: 6 / (2 x 6) = 0.500, nothing recorded, tail 0.
has '| 1 | flash_decode | 1 | 1 | 6.0 | 6.0 | 12.0 | 6.0 | 0.500 | - | - | 0.0 |'
# launch 2: [9, 11] and [11, 13] back to back on SM 0: union 4, 4 / (2 x 4) = 0.500; the count
# stays 1 through 11 (one ends as the next starts), so the tail is 0.
has '| 2 | merge | 2 | 1 | 9.0 | 11.0 | 13.0 | 4.0 | 0.500 | - | - | 0.0 |'
has "overlap launch 0 / launch 1: 4.0 us (1.000 of launch 1's blocks started before launch 0's last end)"
has "overlap launch 0 / launch 2: 1.0 us (0.500 of launch 2's blocks started before launch 0's last end)"
has "overlap launch 1 / launch 2: 3.0 us (1.000 of launch 2's blocks started before launch 1's last end)"
# q: SM 0 [0, 4] and [1, 3] (union 4), SM 1 [2, 4]; the empty block's SM 2 is not counted:
# 6 / (2 x 4) = 0.750. Ramps 0.5, 0.3, 0.9 (median 0.5); epilogues 1.0, 0.2, 0.4 (median 0.4);
# running 1, 2, 3 (peak) from 0, 1, 2 us, then 2 from 3: tail 4 - 3 = 1.0.
has '| 0 | merge | 3 | 2 | 0.0 | 2.0 | 4.0 | 4.0 | 0.750 | 0.5 | 0.4 | 1.0 |'
has 'empty blocks (no end time): launch 0: 1'
[ "$(echo "$got" | grep '^## ' | tr '\n' ' ')" = "## p ## q " ] || fail "sections not p then q"
[ "$(echo "$got" | grep -c '^overlap ')" = 3 ] || fail "not 3 overlap lines (q has one launch)"
[ "$(echo "$got" | grep -c '^empty ')" = 1 ] || fail "an empty line for a point without empty blocks"
head -1 "$out/gantt.csv" | grep -qx 'point,smid,launch,busy_us' || fail "gantt header"
for row in p,0,0,10.000 p,0,1,0.000 p,0,2,4.000 p,1,0,6.000 p,1,1,6.000 q,0,0,4.000 q,1,0,2.000; do
  grep -qx "$row" "$out/gantt.csv" || fail "gantt row $row"
done
[ "$(wc -l < "$out/gantt.csv")" = 9 ] || fail "gantt: not 1 + 6 + 2 lines"

# Refusals: a non-zero exit and a message naming the file (and line).
refused() {  # refused NAME TEXT: NAME.csv exits non-zero with a message containing TEXT
  python3 "$bt" "$out/$1.csv" > "$out/$1.txt" 2>&1 && fail "$1: exits 0"
  grep -qF -- "$2" "$out/$1.txt" || fail "$1: no message '$2': $(cat "$out/$1.txt")"
}
sed '1s/,end_ns$/,stop_ns/' "$out/t.csv" > "$out/header.csv"
refused header "$out/header.csv: line 1: header"
sed '3s/.*/p,0,row_mma,0,0,5000,,,4000/' "$out/t.csv" > "$out/backwards.csv"
refused backwards "$out/backwards.csv: line 3: end_ns 4000 is before start_ns 5000"
sed '4s/,4000$/,4e3/' "$out/t.csv" > "$out/notint.csv"
refused notint "$out/notint.csv: line 4: end_ns '4e3' is not a non-negative integer"
sed '5s/,6000$//' "$out/t.csv" > "$out/short.csv"
refused short "$out/short.csv: line 5: 8 fields, expected 9"
sed '5s/row_mma/merge/' "$out/t.csv" > "$out/kernel.csv"
refused kernel "$out/kernel.csv: line 5: launch 0 of point 'p' is kernel row_mma"
refused missing "cannot read $out/missing.csv"
echo "block_timeline: ok"
