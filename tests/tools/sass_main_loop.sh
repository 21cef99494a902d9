#!/bin/sh
# tools/sass_main_loop.py (the `sass` stage of tools/gpu_check.sh) on two
# small listings, one as cuobjdump writes SASS and one as nvdisasm does: the
# main loop is found and counted, kernels are named from the tile table (and
# "(u8 input)" for an unsigned input) and sorted by tile, and a kernel without
# IMMA fails.
# Usage: sass_main_loop.sh PYTHON PROJECT_SOURCE_DIR
python=$1
root=$2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
status=0
fail() {
  echo "FAIL: $*" >&2
  status=1
}

# Tile 1 (m128n64k64): a prologue wait, then the loop: wait, barrier, 2 copies,
# 2 ldmatrix, 3 IMMA, the branch back; then the epilogue.
cat >"$dir/cuobjdump.sass" <<'SASS'
	code for sm_90
		Function : _ZN5octet4cuda47_GLOBAL__N__x_18conv2d_imma_kernelILi1EEEvNS0_5igemm7ProblemEPKaS6_NS0_15RequantEpilogueEPa
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                     /* 0x00000a00ff017b82 */
                                                                              /* 0x000fe40000000800 */
        /*0010*/                   DEPBAR.LE SB0, 0x2 ;                       /* 0x000080800000791a */
                                                                              /* 0x000fe20000000000 */
        /*0020*/                   DEPBAR.LE SB0, 0x2 ;                       /* 0x000080800000791a */
        /*0030*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;              /* 0x0000000000007b1d */
        /*0040*/                   LDGSTS.E.BYPASS.128 [R39], [R36.64], P0 ;  /* 0x0000000024277fae */
        /*0050*/              @!P1 LDGSTS.E.BYPASS.128 [R41], [R38.64], P2 ;  /* 0x0000000026297fae */
        /*0060*/                   IADD3 R4, R4, 0x1, RZ ;                    /* 0x0000000104047810 */
        /*0070*/                   LDSM.16.M88.4 R40, [R48+UR5] ;             /* 0x000000053028783b */
        /*0080*/                   LDSM.16.M88.4 R44, [R3+UR5+0x4000] ;       /* 0x004000050302c83b */
        /*0090*/                   IMMA.16832.S8.S8 R28, R40.ROW, R44.COL, R28 ;
        /*00a0*/                   IMMA.16832.S8.S8 R24, R40.ROW, R46.COL, R24 ;
        /*00b0*/                   IMMA.16832.S8.S8 R20, R42.ROW, R44.COL, R20 ;
        /*00c0*/              @!P0 BRA 0x20 ;                                 /* 0xfffffffc00000947 */
        /*00d0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;              /* 0x0000000000007b1d */
        /*00e0*/                   EXIT ;                                     /* 0x000000000000794d */
		Function : _ZN5octet4cuda47_GLOBAL__N__x_18conv2d_imma_kernelILi0EEEvNS0_5igemm7ProblemEPKaS6_NS0_15RequantEpilogueEPa
        /*0000*/                   DEPBAR.LE SB0, 0x2 ;
        /*0010*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0020*/                   IMMA.16832.S8.S8 R28, R40.ROW, R44.COL, R28 ;
        /*0030*/                   BRA 0x0 ;
		Function : _ZN5octet4cuda47_GLOBAL__N__x_18conv2d_imma_kernelILi0ELb1EEEvNS0_5igemm7ProblemEPKaS6_NS0_15RequantEpilogueEPa
        /*0000*/                   DEPBAR.LE SB0, 0x2 ;
        /*0010*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0020*/                   IMMA.16832.U8.S8 R28, R40.ROW, R44.COL, R28 ;
        /*0030*/                   IMMA.16832.U8.S8 R24, R40.ROW, R46.COL, R24 ;
        /*0040*/                   BRA 0x0 ;
		Function : _ZN5octet4cuda13pool_max_kernelEv
        /*0000*/                   EXIT ;
SASS
"$python" "$root/tools/sass_main_loop.py" "$dir/cuobjdump.sass" "$root/runtime/cuda/implicit_gemm.h" >"$dir/out" 2>&1 ||
  fail "cuobjdump listing: status $?: $(cat "$dir/out")"
expected="m128n128k64: main loop 4 instructions per K stage, 1 IMMA, 0 LDSM, 0 LDGSTS: 3.00 others per IMMA
m128n128k64 (u8 input): main loop 5 instructions per K stage, 2 IMMA, 0 LDSM, 0 LDGSTS: 1.50 others per IMMA
m128n64k64: main loop 11 instructions per K stage, 3 IMMA, 2 LDSM, 2 LDGSTS: 2.67 others per IMMA"
[ "$(cat "$dir/out")" = "$expected" ] || fail "cuobjdump listing: got
$(cat "$dir/out")
expected
$expected"

# nvdisasm's headers; tile 3 has no IMMA.
cat >"$dir/nvdisasm.sass" <<'SASS'
//--------------------- .text._ZN5octet4cuda18conv2d_imma_kernelILi3EEEvv --------------------------
        /*0000*/                   DEPBAR.LE SB0, 0x2 ;
        /*0010*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0020*/                   IDP4A R1, R2, R3, R1 ;
        /*0030*/                   EXIT ;
//--------------------- .text._ZN5octet4cuda18conv2d_imma_kernelILi2EEEvv --------------------------
.L_x_3:
        /*0000*/                   DEPBAR.LE SB0, 0x2 ;
        /*0010*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0020*/                   IMMA.16832.S8.S8 R28, R40.ROW, R44.COL, R28 ;
        /*0030*/                   IMMA.16832.S8.S8 R24, R40.ROW, R46.COL, R24 ;
        /*0040*/              @!P0 BRA `(.L_x_3) ;
SASS
"$python" "$root/tools/sass_main_loop.py" "$dir/nvdisasm.sass" "$root/runtime/cuda/implicit_gemm.h" >"$dir/out" 2>&1 &&
  fail "a kernel without IMMA passed"
expected="m128n32k64: main loop 5 instructions per K stage, 2 IMMA, 0 LDSM, 0 LDGSTS: 1.50 others per IMMA
m128n16k64: no IMMA instruction"
[ "$(cat "$dir/out")" = "$expected" ] || fail "nvdisasm listing: got
$(cat "$dir/out")
expected
$expected"

"$python" "$root/tools/sass_main_loop.py" "$root/README.md" "$root/runtime/cuda/implicit_gemm.h" >"$dir/out" 2>&1 &&
  fail "a listing without kernels passed"
grep -q "no conv2d_imma_kernel in" "$dir/out" || fail "no message for a listing without kernels: $(cat "$dir/out")"

[ $status -eq 0 ] && echo "sass_main_loop: 3 listings as expected"
exit $status
