# The stages of tools/gpu_check.sh (which sources this file) that check a
# feature octet leaves off until a GPU has run it, and mark it good for the
# stages after them on this machine (build-gpu/<stage>_passed; gpu_check.sh's
# GATED names each one's switch). They use its helpers and variables.

# Runs test_cuda's tests $2 (a gtest filter) with gate $1's switch on and, if
# they ran and passed, marks it good; $3 says what they showed.
run_gate() {
  local gate=$1 filter=$2 shown=$3
  need_build test_cuda
  rm -f "$BUILD/${gate}_passed"
  run_logged "$gate" env "${GATED[$gate]}=1" "$BUILD/tests/test_cuda" --gtest_brief=1 --gtest_filter="$filter"
  if grep -q "SKIPPED" "$RESULTS/$gate.log"; then die "$gate: tests skipped on this machine ($gate.log says why)"; fi
  touch "$BUILD/${gate}_passed"
  note "$gate: $shown: the next stages use it (${GATED[$gate]}=1)"
}

# The wgmma tiles (sm_90a, compute capability 9.0): the probe and every tile.
stage_wgmma() {
  run_gate wgmma 'CudaImma.Wgmma*:CudaImma.EveryTileMatchesTheCpuRuntime' \
    "the probe matches the emulation, every tile the CPU runtime"
}

# Kernels launched programmatically (compute capability 9.0+): ResNet-18 and
# -20 on cuda-imma, a grouped network and one of every other operator on every
# backend, direct, captured and replayed runs, with the shortcuts on the side stream and without.
stage_pdl() {
  run_gate pdl 'CudaEngineLaunches.ProgrammaticLaunchesKeepTheCpuLogits' \
    "ResNet-18, ResNet-20, a grouped network and every operator keep the CPU's logits with programmatic launches"
}

# The side stream (stream_schedule.h): ResNet-18's shortcuts beside their
# blocks' first convs, on every backend.
stage_side_stream() {
  run_gate side_stream 'CudaNetwork.ShortcutsBeside*' "ResNet-18 keeps the CPU's logits with its shortcuts beside"
}

# cuda-imma's split K (implicit_gemm.h SplitK): ResNet-18 at batch 1 and 3, and
# every tile forced on layers of few output tiles and long K.
stage_split_k() {
  run_gate split_k 'CudaImma.SplitKKeepsTheCpuLogits:CudaImma.EveryTileMatchesTheCpuRuntime' \
    "ResNet-18 and every tile keep the CPU's results with K split"
}
