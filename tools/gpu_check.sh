#!/usr/bin/env bash
# The GPU build and checks, on a machine with an NVIDIA GPU, nvcc, cmake,
# ninja and python3 with pip PyTorch (CUDA), from a clean tree. docs/gpu.md
# says what to carry there and how to run it with the `device` tool.
#
#   tools/gpu_check.sh STAGE...     the stages below, in the order named
#   tools/gpu_check.sh carry        on the build machine (Debian): fills .gpu/
#
#   carry  apt-get download the header and test packages into .gpu/debs and copy
#          CIFAR-10 (JPEG copy, ../shared/data/cifar10; CARRY_CIFAR10=0: not)
#          into .gpu/cifar10; the imported stage's models (CARRY_MODELS=0:
#          none) and, where they leave room, Fashion-MNIST
#   deps   unpack the Debian header packages of .gpu/debs into build-gpu/deps and
#          make CIFAR-10 (binary layout) in build-gpu/data from .gpu/cifar10
#   build  configure (LibTorch from torch.utils.cmake_prefix_path, sm_90 unless
#          OCTET_CUDA_ARCH says otherwise) and build into build-gpu
#   sass   -Xptxas -v of the cuda-imma kernels (registers, spills, stack) and
#          their SASS: IMMA instructions, no IDP4A, and each main loop's
#          instructions per IMMA (tools/sass_main_loop.py); of the wgmma
#          tiles (sm_90a): registers, no spills, their GMMA instructions
#   cuda   test_cuda alone: the CUDA backends against the CPU runtime (not
#          in all, whose test stage runs it)
#   wgmma, pdl, side_stream, split_k  the gates (tools/gpu_check_gates.sh): each runs
#          the GPU tests of a feature octet leaves off until a GPU has run it and,
#          if they pass, turns it on for the stages after it: the wgmma tiles
#          (OCTET_WGMMA), programmatic launches (OCTET_PDL), the side stream
#          (OCTET_SIDE_STREAM), split K (OCTET_SPLIT_K)
#   harness  test_backend_ops's CUDA columns alone (not in all), then memcheck
#          on the cases of the kernels outside cuda-imma's GEMM, racecheck on
#          the activation table's, synccheck on LayerNorm's
#   graph_step  test_cuda_graph_step alone: `octet train --cuda-graph`'s
#          captured step against the eager one (not in all, whose test runs it)
#   test   the full ctest suite (test_cuda's tests too, unless cuda passed),
#          then test_backend_ops alone for its table (not after harness, nor
#          with TEST_TABLE=0)
#   train  ResNet-18 on CIFAR-10 (the command of issue 10), quantized; float vs
#          int8 top-1 and agreement, CPU and GPU runtimes compared image by image
#   bench  octet bench infer, ResNet-18 and ResNet-20, batch 256 and 1, --layers
#          (the trained ResNet-18 of `train` if there is one, else one trained
#          for a few steps: int8 speed does not depend on the weights)
#   imported  the ONNX models of .gpu/models (python/tools/gpu_models.py, not
#          in all): MobileNetV2's and ConvNeXt's CIFAR-10 CPU and GPU logits
#          compared over the test set; they, MobileNetV2, ResNet-50 and
#          ConvNeXt-T at 224 timed (IMPORTED_MODELS: which of mv2_cifar
#          mobilenet_v2 resnet50 convnext_cifar convnext_tiny)
#   precision  octet bench train precision, ResNet-18 on CIFAR-10, 5 epochs per
#          lever, the cuda-graph row included (not in all; PRECISION_EPOCHS)
#   profile  Nsight Compute on each convolution of one cuda-imma ResNet-18 batch
#   sanitize  compute-sanitizer's memcheck, racecheck and synccheck on every
#          cuda-imma tile, forced, on small layers
#   all    deps build sass, the gates (wgmma pdl side_stream split_k), bench, then test and train side by side (the
#          speed figures first, on an idle GPU), then profile and sanitize
#          if TIME_LIMIT (seconds since the start) leaves 2 minutes for each
#
# KEEP_GOING=1: the stages named run one after another whatever fails (each
# builds only what it runs), and the script fails at the end naming those that
# failed: for one device call that checks several independent things.
#
# Results go to $OUT (default build-gpu/out): one log and JSON file per stage,
# and summary.txt. With BUNDLE=1 (for the device tool, which brings back at
# most 8 files, and what is in $OUT when a call is stopped at its time limit)
# $OUT holds only summary.txt and results.tar.gz, all the rest, updated after
# every stage and when the script ends, whether it passed or failed.
#
# Every stage stops at the first failure with a message saying what failed.
# A stage runs what it needs first (deps, configure and a build: all of it
# for test, only octet for train, bench and profile; quick where build-gpu
# already has them), so each call of the device tool can start on a fresh
# machine. Each stage's time goes to the summary.
set -euo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD="$ROOT/build-gpu"
DEPS="$BUILD/deps"
DATA="$BUILD/data"
CARRIED="$ROOT/.gpu"
OUT=${OUT:-$BUILD/out}
ARCH=${OCTET_CUDA_ARCH:-90}
PYTHON=${PYTHON:-python3}
OCTET="$BUILD/tools/octet"
R18="$BUILD/r18"
# Where the tests read Fashion-MNIST: Debian's dataset-fashion-mnist.
FASHION_MNIST=/usr/share/datasets/fashion-mnist
# Idle OpenMP threads sleep: spinning ones of parallel processes slow each other many times over.
export OMP_WAIT_POLICY=passive
# The tests run outside ctest read CIFAR-10 where ctest would point them.
export OCTET_CIFAR10_DIR="$DATA/cifar-10-batches-bin"
# Features off in octet until a GPU has checked them (tools/gpu_check_gates.sh),
# by their switches: on in the stages after their stage passed on this
# machine, unless the caller set the switch: OCTET_ and the gate's name in
# capitals (OCTET_WGMMA, OCTET_PDL, OCTET_SIDE_STREAM, OCTET_SPLIT_K).
GATES=(wgmma pdl side_stream split_k)  # in the order `all` runs them
declare -A GATED=()
for gate in "${GATES[@]}"; do GATED[$gate]=OCTET_${gate^^}; done
# The stages a caller may name besides carry, deps, build and all: the one list the dispatch below reads.
STAGES=(sass "${GATES[@]}" cuda harness graph_step test train bench imported precision profile sanitize)
declare -A GATE_FIXED=()
for gate in "${!GATED[@]}"; do [ ! -v "${GATED[$gate]}" ] || GATE_FIXED[$gate]=1; done
RESULTS=$OUT
if [ "${BUNDLE:-0}" = 1 ]; then
  RESULTS="$BUILD/results"
  rm -rf "$RESULTS"
fi
mkdir -p "$OUT" "$RESULTS"
SUMMARY="$RESULTS/summary.txt"
# $RESULTS packed into $OUT (BUNDLE=1), replacing the last pack whole. tar's
# status 1 (a log grew while it was read) still makes a usable pack.
bundle_results() {
  [ "$RESULTS" != "$OUT" ] || return 0
  local part="$OUT/.results.$BASHPID.part" status=0
  tar czf "$part" -C "$RESULTS" . 2>/dev/null || status=$?
  if [ "$status" -le 1 ]; then mv "$part" "$OUT/results.tar.gz"; else rm -f "$part"; fi
  cp "$SUMMARY" "$OUT/summary.txt" 2>/dev/null || true
}
# Also every minute while a stage runs, so that a call stopped at its time
# limit (no EXIT trap runs then) still brings back the logs so far.
bundler=
if [ "$RESULTS" != "$OUT" ]; then
  (
    trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
    while :; do
      sleep 60 &
      sleeper=$!
      wait "$sleeper"
      bundle_results
    done
  ) </dev/null >/dev/null 2>&1 &
  bundler=$!
fi
finish() {
  [ -z "$bundler" ] || kill "$bundler" 2>/dev/null || true
  bundle_results
}
trap finish EXIT

die() {
  echo "gpu_check: FAILED: $*" | tee -a "$SUMMARY" >&2
  exit 1
}
note() { echo "gpu_check: $*" | tee -a "$SUMMARY"; }
# Runs stage $1 unless this invocation already ran it, and says how long it
# took: what the next GPU session plans its 15 minutes with.
declare -A stage_ran
run_stage() {
  [ -z "${stage_ran[$1]:-}" ] || return 0
  stage_ran[$1]=1
  local started=$SECONDS
  note "stage $1: $(date -u +%H:%M:%S)"
  for gate in "${!GATED[@]}"; do
    [ -n "${GATE_FIXED[$gate]:-}" ] || export "${GATED[$gate]}=$([ -f "$BUILD/${gate}_passed" ] && echo 1 || echo 0)"
  done
  "stage_$1"
  note "stage $1: done in $((SECONDS - started)) s"
  bundle_results
}
# Runs the stages named at the same time, each in its own subshell (a die
# ends only its stage), and adds those that fail to failed_stages. Stages
# run together share the cores and the GPU: never a timed one with another.
failed_stages=()
run_and_collect() {
  local stage pids=()
  for stage in "$@"; do
    run_stage "$stage" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed_stages+=("${*:i+1:1}"); done
}
# deps, configure and a build of the targets named (all when none): the
# stages that only run octet build it alone, which skips the tests' objects.
need_build() {
  run_stage deps
  run_stage configure
  if [ $# -eq 0 ]; then
    run_stage build
  elif [ -z "${stage_ran[build]:-}" ]; then
    compile "build_$1" --target "$@"
  fi
}
# Runs a command with its output in $RESULTS/<name>.log; fails naming the log.
run_logged() {
  local name=$1
  shift
  echo "+ $*" >"$RESULTS/$name.log"
  "$@" >>"$RESULTS/$name.log" 2>&1 || die "$name: '$*' exited with status $? (last lines of $RESULTS/$name.log below)
$(tail -n 30 "$RESULTS/$name.log")"
}
need() { command -v "$1" >/dev/null || die "'$1' is not on PATH: $2"; }

stage_configure() {
  need nvcc "the CUDA toolkit's bin folder must be on PATH"
  need cmake "install cmake"
  need ninja "install ninja"
  [ -d "$DEPS/usr/include" ] || die "run the deps stage first"
  local prefix
  prefix=$("$PYTHON" -c 'import torch; print(torch.utils.cmake_prefix_path)') ||
    die "$PYTHON cannot import torch (pip PyTorch with CUDA is needed)"
  "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' ||
    die "this PyTorch sees no CUDA device"
  run_logged configure cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_PREFIX_PATH=$prefix;$DEPS/usr" "-DCMAKE_CUDA_ARCHITECTURES=$ARCH" \
    -DOPENSSL_USE_STATIC_LIBS=TRUE "-DOPENSSL_ROOT_DIR=$DEPS/usr" \
    "-DPython_EXECUTABLE=$(command -v "$PYTHON")" "-DOCTET_CIFAR10_DIR=$DATA/cifar-10-batches-bin"
  grep -q "CUDA runtime enabled" "$RESULTS/configure.log" || die "configure did not enable the CUDA runtime"
  grep -q "LibTorch has CUDA" "$RESULTS/configure.log" ||
    die "configure did not find LibTorch's CUDA: no CUDA-graph baseline (see $RESULTS/configure.log)"
}

# cmake --build with the arguments after the log's name.
compile() {
  local name=$1
  shift
  run_logged "$name" cmake --build "$BUILD" "$@"
  if grep -E "warning" "$RESULTS/$name.log" | grep -v "lto-wrapper" >/dev/null; then
    note "$name: warnings, see $name.log"
  fi
  note "$name: ok ($(nproc) cores) $*"
}

stage_build() {
  run_stage configure
  compile build
}

# The operator harness's CUDA columns alone (its table: every case x CUDA
# backend against the int8 reference), then compute-sanitizer's memcheck on
# the cases of the kernels outside cuda-imma's GEMM, on cuda-imma.
stage_harness() {
  need_build test_backend_ops
  "$BUILD/tests/test_backend_ops" --gtest_brief=1 --gtest_filter='*cuda*' >"$RESULTS/backend_ops_cuda.log" 2>&1 || true
  grep -E "^[A-H] = |cases x backends" "$RESULTS/backend_ops_cuda.log" | tee -a "$SUMMARY" || true
  grep -q "cases x backends: [0-9]* equal to the reference, 0 different" "$RESULTS/backend_ops_cuda.log" ||
    die "harness: a CUDA backend differs from the reference or the harness failed (backend_ops_cuda.log)"
  need compute-sanitizer "compute-sanitizer comes with the CUDA toolkit"
  local kernels=(grouped dilated pool concat mul_ channel_ pad2d activation /add_ /relu_ shortcut prelu layer_norm)
  local filter
  filter=$(printf '*%s*cuda_imma*:' "${kernels[@]}")
  run_logged harness_memcheck compute-sanitizer --tool memcheck --error-exitcode 1 "$BUILD/tests/test_backend_ops" \
    --gtest_brief=1 --gtest_filter="${filter%:}"
  note "harness: memcheck: $(grep -E "ERROR SUMMARY" "$RESULTS/harness_memcheck.log" | tail -1)"
  # The activation table in shared memory behind a barrier, and LayerNorm's warp shuffles.
  run_logged harness_racecheck compute-sanitizer --tool racecheck --error-exitcode 1 \
    "$BUILD/tests/test_backend_ops" --gtest_brief=1 --gtest_filter='*activation*cuda_imma*:*activation*cuda_dp4a*'
  note "harness: racecheck: $(grep -E "RACECHECK SUMMARY|ERROR SUMMARY" "$RESULTS/harness_racecheck.log" | tail -1)"
  run_logged harness_synccheck compute-sanitizer --tool synccheck --error-exitcode 1 \
    "$BUILD/tests/test_backend_ops" --gtest_brief=1 --gtest_filter='*layer_norm*cuda_imma*:*layer_norm*cuda_dp4a*'
  note "harness: synccheck: $(grep -E "ERROR SUMMARY" "$RESULTS/harness_synccheck.log" | tail -1)"
}

# The CUDA-graph training step (the optimizer step and learning rate on the
# device, captured once and replayed) against the eager step it replaces.
stage_graph_step() {
  need_build test_cuda_graph_step
  run_logged graph_step "$BUILD/tests/test_cuda_graph_step" --gtest_brief=1
  note "graph_step: $(grep -E "^\[  PASSED  \]|tests? skipped" "$RESULTS/graph_step.log" | tr '\n' ' ')"
}

# test_cuda alone: the CUDA backends against the CPU runtime (every
# cuda-imma tile, the zoo models' test sets).
stage_cuda() {
  need_build test_cuda
  run_logged test_cuda "$BUILD/tests/test_cuda" --gtest_brief=1
  note "cuda: $(grep -E "^\[  PASSED  \]|tests? skipped" "$RESULTS/test_cuda.log" | tr '\n' ' ')"
}

stage_test() {
  need_build
  # Four tests at a time, with a quarter of the cores each. ctest's exit
  # status is read below, after its summary is saved. test_cuda's tests
  # (label test_cuda) run again only if the cuda stage did not pass here.
  local threads=$(( $(nproc) / 4 > 0 ? $(nproc) / 4 : 1 )) skip=()
  [ -z "${stage_ran[cuda]:-}" ] || skip=(-LE '^test_cuda$')
  (cd "$BUILD" && OMP_NUM_THREADS=$threads ctest --output-on-failure -j 4 --timeout 1500 "${skip[@]}" \
    --output-junit "$RESULTS/ctest-junit.xml") >"$RESULTS/ctest.log" 2>&1 || true
  grep -E "tests passed|tests failed" "$RESULTS/ctest.log" | tail -1 | tee -a "$SUMMARY"
  "$PYTHON" "$ROOT/tests/tools/ctest_summary.py" "$RESULTS/ctest-junit.xml" | tee -a "$SUMMARY" || true
  grep -A200 "The following tests FAILED" "$RESULTS/ctest.log" | tee -a "$SUMMARY" || true
  # The operator harness once more in one process, for its cases x backends
  # table (over 100 s on an H200), unless the harness stage gave it in this
  # run or TEST_TABLE=0 says an earlier call did.
  if [ -z "${stage_ran[harness]:-}" ] && [ "${TEST_TABLE:-1}" = 1 ]; then
    "$BUILD/tests/test_backend_ops" --gtest_brief=1 >"$RESULTS/backend_ops.log" 2>&1 || true
    grep -E "^(case|[A-G] = |cases x backends)" "$RESULTS/backend_ops.log" | tee -a "$SUMMARY" || true
  fi
  grep -q "100% tests passed" "$RESULTS/ctest.log" || die "ctest: some tests failed (ctest.log)"
}

stage_train() {
  need_build octet
  local data="$DATA/cifar-10-batches-bin"
  if [ ! -f "$R18.octet" ]; then
    run_logged train "$OCTET" train --model resnet18 --dataset cifar10 --data "$data" --epochs 30 --batch-size 128 \
      --optimizer sgd --lr 0.1 --momentum 0.9 --weight-decay 5e-4 --schedule cosine --device cuda --workers 4 \
      -o "$R18.octet" --json "$RESULTS/train_r18.json"
  fi
  # The defaults (unsigned activations, 16-bit projection shortcuts: cuda-imma, the cuda default, reads them),
  # compared between the CPU and the GPU; and signed 8-bit ones, which every CUDA backend reads, for bench.
  [ -f "$R18.default.int8.octet" ] || run_logged quantize "$OCTET" quantize --checkpoint "$R18.octet" \
    --data "$data" -o "$R18.default.int8.octet" --json "$RESULTS/quantize_r18.json"
  [ -f "$R18.int8.octet" ] || run_logged quantize_signed "$OCTET" quantize --checkpoint "$R18.octet" --data "$data" \
    --activations signed --wide-bits 8 -o "$R18.int8.octet"
  run_logged eval "$OCTET" eval --checkpoint "$R18.octet" --data "$data" --quantized "$R18.default.int8.octet" \
    --json "$RESULTS/eval_r18.json"
  for backend in cpu cuda; do
    run_logged "predict_$backend" "$OCTET" predict --quantized "$R18.default.int8.octet" --data "$data" \
      --backend "$backend" --json "$BUILD/predict_r18_$backend.json"
  done
  local report
  report=$("$PYTHON" - "$RESULTS/eval_r18.json" "$BUILD/predict_r18_cpu.json" "$BUILD/predict_r18_cuda.json" <<'EOF'
import json, sys
evaluation = json.load(open(sys.argv[1]))
cpu, gpu = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
same_logits = cpu["int8_logits"] == gpu["int8_logits"]
same = sum(a == b for a, b in zip(cpu["int8_predictions"], gpu["int8_predictions"]))
print("ResNet-18 CIFAR-10 (JPEG copy): " + ", ".join(
    f"{k} {evaluation[k]}" for k in evaluation if isinstance(evaluation[k], (int, float))))
print(f"int8 top-1 on the CPU {cpu['int8_top1']:.2f}%, on {gpu['backend']} {gpu['int8_top1']:.2f}%; "
      f"predictions equal on {same} of {cpu['images']} images; logits bit-exact: {same_logits}")
sys.exit(0 if same_logits else 1)
EOF
  ) || die "train: the CPU and GPU runtimes differ: $report"
  echo "$report" >"$RESULTS/train_summary.txt"
  note "$report"
}

# compute-sanitizer on CudaImma.EveryTileMatchesTheCpuRuntime (each tile,
# forced, on seven small layers): memcheck for out-of-bounds and misaligned
# accesses, racecheck for shared-memory hazards between the pipeline's stages
# and the epilogue's staging, synccheck for barriers.
stage_sanitize() {
  need compute-sanitizer "compute-sanitizer comes with the CUDA toolkit"
  need_build test_cuda
  local tool
  for tool in memcheck racecheck synccheck; do
    run_logged "sanitize_$tool" compute-sanitizer --tool "$tool" --error-exitcode 1 "$BUILD/tests/test_cuda" \
      --gtest_filter=CudaImma.EveryTileMatchesTheCpuRuntime
    grep -q "\[  PASSED  \] 1 test" "$RESULTS/sanitize_$tool.log" ||
      die "sanitize: $tool: the test did not pass (sanitize_$tool.log)"
    note "sanitize: $tool: $(grep -E "(ERROR|RACECHECK) SUMMARY" "$RESULTS/sanitize_$tool.log" | tail -1)"
  done
}

# carry, deps; sass; wgmma, pdl, side_stream, split_k; bench, imported, precision, profile
source "$ROOT/tools/gpu_check_deps.sh"
source "$ROOT/tools/gpu_check_sass.sh"
source "$ROOT/tools/gpu_check_gates.sh"
source "$ROOT/tools/gpu_check_timing.sh"

[ $# -gt 0 ] || die "name the stages to run: carry, or deps build ${STAGES[*]}, or all"
for stage in "$@"; do  # all names checked before any stage spends the call's minutes
  [[ " carry deps build ${STAGES[*]} all " == *" $stage "* ]] ||
    die "unknown stage '$stage' (carry deps build ${STAGES[*]} all)"
done
for stage in "$@"; do
  case "$stage" in
    all)
      # The speed figures first, on an otherwise idle machine, in case the
      # call is stopped at its limit; a failed bench (a kernel fault, say)
      # still lets the tests say which kernel and the training run.
      for s in deps build sass; do run_stage "$s"; done
      for s in "${GATES[@]}"; do run_and_collect "$s"; done
      run_and_collect bench
      run_and_collect test train
      # The diagnostics, in what is left of TIME_LIMIT seconds (the device
      # call's timeout_s): the logs so far come back even if it runs out.
      for s in profile sanitize; do
        left=$((${TIME_LIMIT:-0} - SECONDS))
        if [ "$left" -ge 120 ]; then
          run_and_collect "$s"
        else
          note "$s: skipped: $left s left of TIME_LIMIT=${TIME_LIMIT:-unset}, 120 wanted"
        fi
      done
      [ ${#failed_stages[@]} -eq 0 ] || die "stages ${failed_stages[*]} failed (their lines above say why)"
      ;;
    carry | deps | build)
      run_stage "$stage"
      ;;
    *)
      if [ "${KEEP_GOING:-0}" = 1 ]; then
        # One device call checks several things: a stage that fails ends alone
        # (its subshell), the next one still runs, and the script fails at the end.
        run_stage deps
        run_stage configure
        run_and_collect "$stage"
      else
        run_stage "$stage"
      fi
      ;;
  esac
done
[ ${#failed_stages[@]} -eq 0 ] || die "stages ${failed_stages[*]} failed (their lines above say why)"
note "done: results in $OUT"
