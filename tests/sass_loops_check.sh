#!/usr/bin/env bash
# ctest: scripts/sass_loops.py on a synthetic nvdisasm listing of two kernels: the kernel filter,
# the instruction count, a loop (label .. branch back) with its opcode counts, a forward branch and
# a branch to itself that are no loops, predicated instructions, a pattern that names nothing and a
# missing listing; --check-wgmma-a on a loop whose HGMMA reads A registers the loop writes only after
# it (a clobber, exit status 1), one whose A registers are written before it in the loop (P of this
# pass) and one whose A comes from shared memory (neither is a finding), a shuffle's result, a
# write between an HGMMA and the next warpgroup wait (in flight), a P carried into the next pass
# (no finding) and two clobbers beside it; --check-wgmma-serial on a serialised kernel (exit status 1)
# and three that are not; wgmma_sass_check.sh's refusals.
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
# one_finding PATTERN LINE WHAT: --check-wgmma-a on the kernel PATTERN names exits 1 with LINE as
# its only finding (CLOBBERED or IN FLIGHT) and the count line "1 clobbered".
one_finding() {
  local got
  got=$(python3 "$src/scripts/sass_loops.py" "$out/w.sass" "$1" --check-wgmma-a) && fail "$3: exits 0"
  echo "$got"
  grep -qF -- "$2" <<<"$got" || fail "$3: no line '$2'"
  [ "$(grep -cE 'CLOBBERED|IN FLIGHT' <<<"$got")" = 1 ] || fail "$3: not exactly one finding"
  grep -qx 'wgmma A operands: 1 clobbered' <<<"$got" || fail "$3: the count line"
}
one_finding clobber 'CLOBBERED in _Z7clobberv: HGMMA at 0020 reads A from R88-R91, which the loop does not write before it but writes at 0040 (FMNMX)' \
  "the clobbered Q fragments (P, written before its HGMMA in the loop, is no clobber)"
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
one_finding 4shfl 'CLOBBERED in _Z4shflv: HGMMA at 0000 reads A from R88-R91, which the loop does not write before it but writes at 0010 (SHFL.BFLY)' \
  "a shuffle writes its second operand"
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
one_finding 6flight 'IN FLIGHT in _Z6flightv: HGMMA at 0020 reads A from R24-R27, written at 0030 (MOV) before the next warpgroup wait' \
  "the write while the MMA may read (P, packed in the pass, is no loop clobber)"
# P carried into the next pass (the P V behind the next tile's S): _Z7carriedv's P V reads R24-R27,
# which the pass uses as scratch after the wait and then packs (F2FP, each register last): no
# finding. _Z7scratchv writes R26 once more after the packs: a clobber named by that write.
# _Z8packreadv packs its P over the registers its S reads (ptxas 13.0's defect: the P V of the same
# pass reads the pack): a clobber, though every last write is a pack.
cat >>"$out/w.sass" <<'SASS'
	.section	.text._Z7carriedv,"ax",@progbits
.text._Z7carriedv:
.L_x_11:
        /*0000*/                   HGMMA.64x64x16.F32 R56, R88, gdesc[UR16], RZ, !UPT ;
        /*0010*/                   HGMMA.64x64x16.F32 R24, R40, gdesc[UR4].tnspB, R24, gsb0 ;
        /*0020*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0030*/                   SHFL.BFLY PT, R40, R57, 0x1, 0x1f ;
        /*0040*/                   F2FP.F16.F32.PACK_AB R40, R57, R56 ;
        /*0050*/                   F2FP.F16.F32.PACK_AB R41, R59, R58 ;
        /*0060*/                   F2FP.F16.F32.PACK_AB R42, R61, R60 ;
        /*0070*/                   F2FP.F16.F32.PACK_AB R43, R63, R62 ;
        /*0080*/              @!P1 BRA `(.L_x_11) ;
        /*0090*/                   EXIT ;
	.section	.text._Z7scratchv,"ax",@progbits
.text._Z7scratchv:
.L_x_12:
        /*0000*/                   HGMMA.64x64x16.F32 R24, R40, gdesc[UR4].tnspB, R24, gsb0 ;
        /*0010*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0020*/                   F2FP.F16.F32.PACK_AB R40, R57, R56 ;
        /*0030*/                   F2FP.F16.F32.PACK_AB R41, R59, R58 ;
        /*0040*/                   F2FP.F16.F32.PACK_AB R42, R61, R60 ;
        /*0050*/                   F2FP.F16.F32.PACK_AB R43, R63, R62 ;
        /*0060*/                   FADD R42, R42, R1 ;
        /*0070*/              @!P1 BRA `(.L_x_12) ;
        /*0080*/                   EXIT ;
	.section	.text._Z8packreadv,"ax",@progbits
.text._Z8packreadv:
.L_x_13:
        /*0000*/                   HGMMA.64x64x16.F32 R56, R88, gdesc[UR16], RZ, !UPT, gsb0 ;
        /*0010*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0020*/                   F2FP.F16.F32.PACK_AB R88, R57, R56 ;
        /*0030*/                   F2FP.F16.F32.PACK_AB R89, R59, R58 ;
        /*0040*/                   F2FP.F16.F32.PACK_AB R90, R61, R60 ;
        /*0050*/                   F2FP.F16.F32.PACK_AB R91, R63, R62 ;
        /*0060*/                   HGMMA.64x64x16.F32 R24, R88, gdesc[UR4].tnspB, R24, gsb0 ;
        /*0070*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0080*/              @!P1 BRA `(.L_x_13) ;
        /*0090*/                   EXIT ;
SASS
got=$(python3 "$src/scripts/sass_loops.py" "$out/w.sass" 7carried --check-wgmma-a) || fail "a carried P: exit status $?"
echo "$got"
grep -qx 'wgmma A operands: 0 clobbered' <<<"$got" || fail "a P packed at the pass's end for the next pass is a finding"
one_finding 7scratch 'CLOBBERED in _Z7scratchv: HGMMA at 0000 reads A from R40-R43, which the loop does not write before it but writes at 0060 (FADD)' \
  "a write after the carried packs"
one_finding 8packread 'CLOBBERED in _Z8packreadv: HGMMA at 0000 reads A from R88-R91, which the loop does not write before it but writes at 0020 (F2FP.F16.F32.PACK_AB)' \
  "a pack that the same pass's P V reads, over the registers S reads next pass"
got=$(python3 "$src/scripts/sass_loops.py" "$out/w.sass" 5clean --check-wgmma-a) || fail "a clean loop: exit status $?"
echo "$got"
grep -qE 'CLOBBERED|IN FLIGHT' <<<"$got" && fail "a write beside the A registers (CS2R R86, MOV R92) is a finding"
grep -qx 'wgmma A operands: 0 clobbered' <<<"$got" || fail "the clean count"
# --check-wgmma-serial. _Z6serialv: each of its three HGMMA a group of its own (gsb0) waited for
# before the next, as ptxas 13.0 emitted the BF16 d 64 row kernels before 622b49e: a finding, exit
# status 1. _Z8pipelinev: the same HGMMA with one group of two (gsb0 on the second only): none.
# _Z5cleanv (above): a pipelined S and a P V, none. _Z7onewaitv: every HGMMA its own group, but the
# first not waited for before the next: none (two groups in flight).
cat >>"$out/w.sass" <<'SASS'
	.section	.text._Z6serialv,"ax",@progbits
.text._Z6serialv:
        /*0000*/                   WARPGROUP.ARRIVE ;
        /*0010*/                   HGMMA.64x64x16.F32.BF16 R24, R116, gdesc[UR8], RZ, !UPT, gsb0 ;
        /*0020*/                   ULOP3.LUT UR10, UR7, 0x10000, URZ, 0xfc, !UPT ;
        /*0030*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0040*/                   WARPGROUP.ARRIVE ;
        /*0050*/                   HGMMA.64x64x16.F32.BF16 R24, R112, gdesc[UR8], R24, gsb0 ;
        /*0060*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0070*/                   HGMMA.64x64x16.F32.BF16 R56, R100, gdesc[UR8].tnspB, R56, gsb0 ;
        /*0080*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0090*/                   EXIT ;
	.section	.text._Z8pipelinev,"ax",@progbits
.text._Z8pipelinev:
        /*0000*/                   WARPGROUP.ARRIVE ;
        /*0010*/                   HGMMA.64x64x16.F32.BF16 R24, R116, gdesc[UR8], RZ, !UPT ;
        /*0020*/                   ULOP3.LUT UR10, UR7, 0x10000, URZ, 0xfc, !UPT ;
        /*0050*/                   HGMMA.64x64x16.F32.BF16 R24, R112, gdesc[UR8], R24, gsb0 ;
        /*0060*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0070*/                   HGMMA.64x64x16.F32.BF16 R56, R100, gdesc[UR8].tnspB, R56, gsb0 ;
        /*0080*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0090*/                   EXIT ;
	.section	.text._Z7onewaitv,"ax",@progbits
.text._Z7onewaitv:
        /*0000*/                   HGMMA.64x64x16.F32.BF16 R24, R116, gdesc[UR8], RZ, !UPT, gsb0 ;
        /*0010*/                   HGMMA.64x64x16.F32.BF16 R56, R100, gdesc[UR8].tnspB, R56, gsb0 ;
        /*0020*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;
        /*0030*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0040*/                   EXIT ;
SASS
got=$(python3 "$src/scripts/sass_loops.py" "$out/w.sass" 6serial --check-wgmma-serial) && fail "a serialised kernel: exits 0"
echo "$got"
grep -qF 'SERIALISED in _Z6serialv: each of its 3 HGMMA is a group of its own, waited for before the next' <<<"$got" ||
  fail "a serialised kernel: no SERIALISED line"
grep -qx 'wgmma serialised: 1 kernels' <<<"$got" || fail "a serialised kernel: the count line"
for k in 8pipeline 5clean 7onewait; do
  got=$(python3 "$src/scripts/sass_loops.py" "$out/w.sass" "$k" --check-wgmma-serial) || fail "$k: exit status $?"
  echo "$got"
  grep -q SERIALISED <<<"$got" && fail "$k is no serialised kernel"
  grep -qx 'wgmma serialised: 0 kernels' <<<"$got" || fail "$k: the count line"
done
# scripts/wgmma_sass_check.sh's refusals: a second argument (exit 2, the usage line), and a
# compiler that is not there (skipped: exit 77 with the reason), both before anything compiles.
bash "$src/scripts/wgmma_sass_check.sh" "$out/a" "$out/b" >"$out/usage.txt" 2>&1
[ $? = 2 ] || fail "wgmma_sass_check.sh with two arguments: exit status not 2"
grep -qF "usage: wgmma_sass_check.sh [OUT_DIR]" "$out/usage.txt" || fail "wgmma_sass_check.sh: no usage line"
NVCC="$out/no-such-nvcc" bash "$src/scripts/wgmma_sass_check.sh" "$out/wsc" >"$out/skip.txt" 2>&1
[ $? = 77 ] || fail "wgmma_sass_check.sh without a compiler: exit status not 77"
grep -qF "skipped: no CUDA compiler ($out/no-such-nvcc)" "$out/skip.txt" || fail "wgmma_sass_check.sh: no skip reason"
echo "sass_loops: ok"
