#!/usr/bin/env bash
# ctest: scripts/sass_loops.py on a synthetic nvdisasm listing of two kernels: the kernel filter,
# the instruction count, a loop (label .. branch back) with its opcode counts, a forward branch and
# a branch to itself that are no loops, predicated instructions, a pattern that names nothing and a
# missing listing; --check-wgmma-a on a loop whose HGMMA reads A registers the loop writes only after
# it (a clobber, exit status 1), one whose A registers are written before it in the loop (P of this
# pass) and one whose A comes from shared memory (neither is a finding), a shuffle's result, and a
# write between an HGMMA and the next warpgroup wait (in flight).
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

# --check-wgmma-a. _Z7clobberv: Q's fragments R88-R91 packed before the loop, S reads them, then the
# softmax writes R89 (the defect of ptxas 13.0); the P V HGMMA reads R24-R27, written in the loop
# first (F2FP), and a wide write (CS2R R90) counts two registers. _Z5cleanv: the same without the
# clobber, and an HGMMA with A in shared memory.
cat >"$out/w.sass" <<'SASS'
	.section	.text._Z7clobberv,"ax",@progbits
.text._Z7clobberv:
        /*0000*/                   F2FP.F16.F32.PACK_AB R88, R1, R2 ;
.L_x_7:
        /*0008*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0010*/                   WARPGROUP.ARRIVE ;
        /*0020*/                   HGMMA.64x64x16.F32 R24, R88, gdesc[UR16], RZ, !UPT ;
        /*0030*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0040*/                   FMNMX R89, R26, -INF , !PT ;
        /*0050*/                   F2FP.F16.F32.PACK_AB R24, R27, R26 ;
        /*0060*/                   HGMMA.64x64x16.F32 R56, R24, gdesc[UR4].tnspB, R56, gsb0 ;
        /*0070*/              @!P1 BRA `(.L_x_7) ;
        /*0080*/                   EXIT ;
	.section	.text._Z5cleanv,"ax",@progbits
.text._Z5cleanv:
        /*0000*/                   F2FP.F16.F32.PACK_AB R88, R1, R2 ;
.L_x_8:
        /*0008*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0010*/                   HGMMA.64x64x16.F32 R24, R88, gdesc[UR16], RZ, !UPT ;
        /*0020*/                   HGMMA.64x256x16.F32.BF16 R120, gdesc[UR8], R120 ;
        /*0028*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0030*/                   CS2R R100, SRZ ;
        /*0040*/                   F2FP.F16.F32.PACK_AB R24, R27, R26 ;
        /*0050*/                   HGMMA.64x64x16.F32 R56, R24, gdesc[UR4].tnspB, R56, gsb0 ;
        /*0060*/                   CS2R R86, SRZ ;
        /*0070*/                   MOV R92, RZ ;
        /*0080*/              @!P1 BRA `(.L_x_8) ;
        /*0090*/                   EXIT ;
SASS
got=$(python3 "$src/scripts/sass_loops.py" "$out/w.sass" clobber --check-wgmma-a) && fail "a clobber exits 0"
echo "$got"
grep -q 'CLOBBERED in _Z7clobberv: HGMMA at 0020 reads A from R88-R91, which the loop does not write before it but writes at 0040 (FMNMX)' \
  <<<"$got" || fail "the clobbered Q fragments"
[ "$(grep -c CLOBBERED <<<"$got")" = 1 ] || fail "P, written before its HGMMA in the loop, is no clobber"
grep -qx 'wgmma A operands: 1 clobbered' <<<"$got" || fail "the clobber count"
# _Z4shflv: a shuffle's result (its second operand) lands on R90 after the HGMMA: a clobber.
cat >>"$out/w.sass" <<'SASS'
	.section	.text._Z4shflv,"ax",@progbits
.text._Z4shflv:
.L_x_9:
        /*0000*/                   HGMMA.64x64x16.F32 R24, R88, gdesc[UR16], RZ, !UPT ;
        /*0008*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0010*/                   SHFL.BFLY PT, R90, R26, 0x1, 0x1f ;
        /*0020*/              @!P1 BRA `(.L_x_9) ;
        /*0030*/                   EXIT ;
SASS
got=$(python3 "$src/scripts/sass_loops.py" "$out/w.sass" 4shfl --check-wgmma-a) && fail "a shuffle's clobber exits 0"
grep -q 'CLOBBERED in _Z4shflv: HGMMA at 0000 reads A from R88-R91, which the loop does not write before it but writes at 0010 (SHFL.BFLY)' \
  <<<"$got" || fail "a shuffle writes its second operand: $got"
# _Z6flightv: P is packed in the pass (no loop clobber), but R25 is written after its HGMMA and
# before the next warpgroup wait: IN FLIGHT. _Z5cleanv's P V is waited for at the loop's top before
# the next pass rewrites its operand.
cat >>"$out/w.sass" <<'SASS'
	.section	.text._Z6flightv,"ax",@progbits
.text._Z6flightv:
.L_x_10:
        /*0000*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0010*/                   F2FP.F16.F32.PACK_AB R24, R27, R26 ;
        /*0020*/                   HGMMA.64x64x16.F32 R56, R24, gdesc[UR4].tnspB, R56, gsb0 ;
        /*0030*/                   MOV R25, RZ ;
        /*0040*/              @!P1 BRA `(.L_x_10) ;
        /*0050*/                   EXIT ;
SASS
got=$(python3 "$src/scripts/sass_loops.py" "$out/w.sass" 6flight --check-wgmma-a) && fail "a write in flight exits 0"
echo "$got"
grep -q 'IN FLIGHT in _Z6flightv: HGMMA at 0020 reads A from R24-R27, written at 0030 (MOV) before the next warpgroup wait' \
  <<<"$got" || fail "the write while the MMA may read"
grep -q CLOBBERED <<<"$got" && fail "P, packed in the pass, is no loop clobber"
grep -qx 'wgmma A operands: 1 clobbered' <<<"$got" || fail "the in-flight count"
got=$(python3 "$src/scripts/sass_loops.py" "$out/w.sass" 5clean --check-wgmma-a) || fail "a clean loop: exit status $?"
echo "$got"
grep -qE 'CLOBBERED|IN FLIGHT' <<<"$got" && fail "a write beside the A registers (CS2R R86, MOV R92) is a finding"
grep -qx 'wgmma A operands: 0 clobbered' <<<"$got" || fail "the clean count"
echo "sass_loops: ok"
