#!/usr/bin/env bash
# ctest: scripts/sass_loops.py on a synthetic nvdisasm listing of two kernels: the kernel filter,
# the instruction count, a loop (label .. branch back) with its opcode counts, a forward branch and
# a branch to itself that are no loops, predicated instructions, a pattern that names nothing and a
# missing listing.
# Usage: sass_loops_check.sh SOURCE_DIR OUT_DIR
set -uo pipefail
src=$1 out=$2
rm -rf "$out" && mkdir -p "$out"
cat >"$out/k.sass" <<'SASS'
	.section	.text._Z5otherv,"ax",@progbits
.text._Z5otherv:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   EXIT ;
	.section	.text._Z6targetv,"ax",@progbits
.text._Z6targetv:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/              @!P0 BRA `(.L_x_2) ;
.L_x_1:
        /*0020*/                   LDSM.16.M88.4 R4, [R2] ;
        /*0030*/                   HMMA.16816.F32 R8, R4, R6, R8 ;
        /*0040*/               @P1 HMMA.16816.F32 R12, R4, R6, R12 ;
        /*0050*/                   LOP3.LUT R2, R2, 0x10, RZ, 0x3c, !PT ;
        /*0060*/              @!P2 BRA `(.L_x_1) ;
.L_x_2:
        /*0070*/                   EXIT ;
.L_x_3:
        /*0080*/                   BRA `(.L_x_3);
SASS
source "$src/tests/script_check_lib.sh"
got=$(python3 "$src/scripts/sass_loops.py" "$out/k.sass" 6target --ops HMMA,LOP3,LDSM) || fail "exit status $?"
echo "$got"
[ "$(echo "$got" | head -1)" = "_Z6targetv: 9 instructions" ] || fail "kernel line"
[ "$(echo "$got" | grep -c 'loop:')" = 1 ] || fail "one loop (the forward branch and the self-branch are none)"
grep -qx '  loop: 5 instructions; HMMA 2, LOP3 1, LDSM 1' <<<"$got" || fail "loop body and its opcodes"
grep -q '_Z5otherv' <<<"$got" && fail "the pattern picked the other kernel"
expect_refused "$out/none.txt" "no kernel name contains 'nosuch'" "a pattern that names no kernel" -- \
  python3 "$src/scripts/sass_loops.py" "$out/k.sass" nosuch
expect_refused "$out/missing.txt" "cannot read" "a missing listing" -- python3 "$src/scripts/sass_loops.py" "$out/missing.sass" x
echo "sass_loops: ok"
