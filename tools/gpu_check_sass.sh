# The sass stage of tools/gpu_check.sh, which sources this file: what ptxas
# and the SASS say of the cuda-imma kernels, mma.sync's (sm_$ARCH) and the
# wgmma tiles' (sm_90a). It uses the script's helpers (need, run_logged, note,
# die) and variables.

stage_sass() {
  need nvcc "the CUDA toolkit's bin folder must be on PATH"
  need cuobjdump "cuobjdump comes with the CUDA toolkit"
  local object="$BUILD/imma_sm$ARCH.o"
  run_logged ptxas nvcc -std=c++17 -O3 -I"$ROOT" "-gencode=arch=compute_$ARCH,code=sm_$ARCH" -Xptxas -v \
    -c "$ROOT/runtime/cuda/conv2d_imma.cu" -o "$object"
  grep -E "Used [0-9]+ registers|spill|stack frame" "$RESULTS/ptxas.log" >"$RESULTS/ptxas_summary.txt"
  if grep -E "[1-9][0-9]* bytes (spill|stack)" "$RESULTS/ptxas.log"; then
    die "a cuda-imma kernel spills or has a stack frame (ptxas.log)"
  fi
  cuobjdump --dump-sass "$object" >"$RESULTS/imma.sass" || die "cuobjdump failed"
  awk '/Function :/ { f = $3 } /IMMA/ { imma[f]++ } /IDP4A/ { dp4a[f]++ } /LDSM/ { ldsm[f]++ } /LDGSTS/ { cp[f]++ }
       END { for (k in imma) printf "%s IMMA %d LDSM %d LDGSTS %d IDP4A %d\n", k, imma[k], ldsm[k], cp[k], dp4a[k] }' \
    "$RESULTS/imma.sass" >"$RESULTS/sass_summary.txt"
  [ -s "$RESULTS/sass_summary.txt" ] || die "no IMMA instruction in the cuda-imma kernels ($RESULTS/imma.sass)"
  if grep -q "IDP4A [1-9]" "$RESULTS/sass_summary.txt"; then die "IDP4A in a cuda-imma kernel"; fi
  "$PYTHON" "$ROOT/tools/sass_main_loop.py" "$RESULTS/imma.sass" "$ROOT/runtime/cuda/implicit_gemm.h" \
    >"$RESULTS/sass_main_loop.txt" || die "a cuda-imma kernel's main loop has no IMMA (sass_main_loop.txt)"
  note "sass: $(wc -l <"$RESULTS/sass_summary.txt") kernels with IMMA, no spills (ptxas_summary.txt, sass_summary.txt)"
  note "sass: main loop per K stage (static SASS instructions per warp):"
  while read -r line; do note "  $line"; done <"$RESULTS/sass_main_loop.txt"
  local wgmma="$BUILD/wgmma_sm90a.o"
  run_logged ptxas_wgmma nvcc -std=c++17 -O3 -I"$ROOT" -gencode=arch=compute_90a,code=sm_90a -Xptxas -v \
    -c "$ROOT/runtime/cuda/conv2d_wgmma.cu" -o "$wgmma"
  if grep -E "[1-9][0-9]* bytes (spill|stack)" "$RESULTS/ptxas_wgmma.log"; then
    die "a wgmma tile's kernel spills or has a stack frame (ptxas_wgmma.log)"
  fi
  cuobjdump --dump-sass "$wgmma" >"$RESULTS/wgmma.sass" || die "cuobjdump failed on the wgmma tiles"
  local registers
  registers=$(grep -oE "Used [0-9]+ registers" "$RESULTS/ptxas_wgmma.log" | grep -oE "[0-9]+" | sort -n | uniq | xargs)
  note "sass: wgmma tiles: $(grep -c "GMMA" "$RESULTS/wgmma.sass") GMMA instructions; registers $registers;" \
    "$(grep -ci "wgmma.*serializ" "$RESULTS/ptxas_wgmma.log" || true) wgmma serialization warnings (ptxas_wgmma.log)"
}
