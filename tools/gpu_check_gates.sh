# The stages of tools/gpu_check.sh (which sources this file) that check a
# feature octet leaves off until a GPU has run it, and mark it good for the
# stages after them on this machine (build-gpu/<stage>_passed; gpu_check.sh's
# GATED names each one's switch). They use its helpers and variables.

# The wgmma tiles (sm_90a): the probe and every tile.
stage_wgmma() {
  need_build test_cuda
  rm -f "$BUILD/wgmma_passed"
  run_logged wgmma env OCTET_WGMMA=1 "$BUILD/tests/test_cuda" --gtest_brief=1 \
    --gtest_filter='CudaImma.Wgmma*:CudaImma.EveryTileMatchesTheCpuRuntime'
  if grep -q "SKIPPED" "$RESULTS/wgmma.log"; then die "wgmma: skipped: no device of compute capability 9.0 (wgmma.log)"; fi
  touch "$BUILD/wgmma_passed"
  note "wgmma: the probe matches the emulation, every tile the CPU runtime: the next stages offer them"
}

# cuda-imma's convs launched programmatically (compute capability 9.0+): the
# CPU's logits on direct, captured and replayed runs, with the shortcuts on the
# side stream and without.
stage_pdl() {
  need_build test_cuda
  rm -f "$BUILD/pdl_passed"
  run_logged pdl env OCTET_PDL=1 "$BUILD/tests/test_cuda" --gtest_brief=1 \
    --gtest_filter='CudaImma.ProgrammaticLaunchesKeepTheCpuLogits'
  if grep -q "SKIPPED" "$RESULTS/pdl.log"; then die "pdl: skipped: no CUDA device (pdl.log)"; fi
  touch "$BUILD/pdl_passed"
  note "pdl: ResNet-18 and ResNet-20 keep the CPU's logits with programmatic launches: the next stages use them"
}

# The side stream (stream_schedule.h): ResNet-18's shortcuts beside their
# blocks' first convs, the CPU's logits on every backend.
stage_side_stream() {
  need_build test_cuda
  rm -f "$BUILD/side_stream_passed"
  run_logged side_stream env OCTET_SIDE_STREAM=1 "$BUILD/tests/test_cuda" --gtest_brief=1 \
    --gtest_filter='CudaNetwork.ShortcutsBeside*'
  if grep -q "SKIPPED" "$RESULTS/side_stream.log"; then die "side_stream: skipped: no CUDA device (side_stream.log)"; fi
  touch "$BUILD/side_stream_passed"
  note "side_stream: ResNet-18 keeps the CPU's logits with its shortcuts on the side stream: the next stages use it"
}

# cuda-imma's split K (implicit_gemm.h SplitK): ResNet-18 at batch 1 and 3, and
# every tile forced on layers of few output tiles and long K.
stage_split_k() {
  need_build test_cuda
  rm -f "$BUILD/split_k_passed"
  run_logged split_k env OCTET_SPLIT_K=1 "$BUILD/tests/test_cuda" --gtest_brief=1 \
    --gtest_filter='CudaImma.SplitKKeepsTheCpuLogits:CudaImma.EveryTileMatchesTheCpuRuntime'
  if grep -q "SKIPPED" "$RESULTS/split_k.log"; then die "split_k: skipped: no CUDA device (split_k.log)"; fi
  touch "$BUILD/split_k_passed"
  note "split_k: ResNet-18 and every tile keep the CPU's results with K split: the next stages split so"
}
