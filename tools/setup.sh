#!/usr/bin/env bash
# octet's whole set-up in one command on a fresh Debian 12 machine:
#   tools/setup.sh demo   install, build, then run the main job (Fashion-MNIST pipeline)
#   tools/setup.sh test   install, build and test without LibTorch (build-core/): the whole
#                         test suite with ctest; then with it (build/): the entries that
#                         need LibTorch or change with it (ctest label torch)
#   tools/setup.sh core   install only what octet needs without LibTorch, build and test
#                         that configuration (everything but training) in build-core/
#   tools/setup.sh build  install and build only
#   tools/setup.sh sanitize  install, build without LibTorch with AddressSanitizer and
#                         UndefinedBehaviorSanitizer (build-sanitize/) and run the test
#                         suite there but the zoo's full-test-set accuracy entries and ten
#                         whole-network harness entries (the Python module is not built: it
#                         would need the sanitizer runtimes preloaded into python)
#   tools/setup.sh fuzz   install clang, build the libFuzzer targets (build-fuzz/) and run
#                         each for OCTET_FUZZ_SECONDS (default 30) seconds (tools/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
# Every step's line starts with the seconds since the set-up began.
say() { echo "octet setup [${SECONDS} s]: $*"; }
case "$mode" in
  demo | test | core | build | sanitize | fuzz) ;;
  *) echo "usage: tools/setup.sh demo|test|core|build|sanitize|fuzz" >&2; exit 2 ;;
esac

# What building the `octet` command line needs (the demo installs only these and LibTorch's).
octet_packages=(build-essential cmake ninja-build ccache libeigen3-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
  libssl-dev libonnx-dev libpng-dev libjpeg-dev dataset-fashion-mnist)
# The Python module, and the test suite (GoogleTest, the Python tests and the notebook).
python_packages=(pybind11-dev python3-pybind11 python3-numpy)
suite_packages=(libgtest-dev libgmock-dev python3-pytest python3-matplotlib python3-nbconvert python3-ipykernel
  jupyter-nbconvert python3-pil python3-onnx)
# The trainer and the float baselines; python3-torch and -torchvision are the tests' peers (the
# image folders' decoding and resizing are checked against torchvision's own). Debian's LibTorch
# calls the BLAS that libblas.so.3 names, the reference one unless OpenBLAS is installed:
# OpenBLAS trains LeNet-5 on Fashion-MNIST in 7.5 s an epoch on 2 cores, against 16.7 s.
torch_packages=(libtorch-dev libgloo-dev libopenblas0-openmp)
torch_peer_packages=(python3-torch python3-torchvision)
# The test configuration also opens `octet report`'s page in headless Chromium, runs
# ONNX's own operator tests (libonnx-testdata's node tests) through the ONNX importer, and
# builds the pip package's wheel and installs it into a venv (python/tests/wheel_install.py).
test_packages=(chromium fonts-dejavu-core libonnx-testdata python3-pip python3-setuptools python3-wheel python3-build python3-venv)
# libFuzzer comes with Debian's clang runtime; OpenMP under clang needs libomp.
fuzz_packages=(clang libclang-rt-dev libomp-dev)
packages=("${octet_packages[@]}")
case "$mode" in
  demo) packages+=("${torch_packages[@]}") ;;
  build) packages+=("${python_packages[@]}" "${suite_packages[@]}" "${torch_packages[@]}") ;;
  core | sanitize) packages+=("${python_packages[@]}" "${suite_packages[@]}" "${test_packages[@]}") ;;
  fuzz) packages+=("${suite_packages[@]}" "${fuzz_packages[@]}") ;;
  test) packages+=("${python_packages[@]}" "${suite_packages[@]}" "${torch_packages[@]}" "${torch_peer_packages[@]}"
    "${test_packages[@]}") ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  say "installed ${#missing[@]} packages"
fi

# CIFAR-10 (JPEG copy) in the official binary layout, for the tests and zoo models that need it.
# The demo's job reads Fashion-MNIST only.
cifar_src=${OCTET_CIFAR10_SOURCE:-../shared/data/cifar10}
if [ "$mode" != demo ] && [ ! -f .data/cifar-10-batches-bin/test_batch.bin ]; then
  if [ -f "$cifar_src/make_cifar10_bin.py" ]; then
    say "writing CIFAR-10 (JPEG copy) to .data/cifar-10-batches-bin"
    /usr/bin/python3 "$cifar_src/make_cifar10_bin.py" .data
  else
    say "warning: no CIFAR-10 source at $cifar_src (set OCTET_CIFAR10_SOURCE); the CIFAR-10 tests will skip" >&2
  fi
fi

# ONNX Runtime (CPU), the peer of the ONNX import and export tests (python/tests/ort_peer.py,
# tools/ort_run.mjs): npm's onnxruntime-node, its binaries inside the package, into .ort/
# (git ignores it), once. Without npm those tests skip, saying so.
ort_version=1.30.0
install_onnx_runtime() {
  if grep -qs "\"version\": \"$ort_version\"" .ort/node_modules/onnxruntime-node/package.json; then
    return 0
  fi
  if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    say "warning: npm or node not found: ONNX Runtime is not installed, its tests will skip" >&2
    return 0
  fi
  say "installing onnxruntime-node $ort_version into .ort/ (npm)"
  mkdir -p .ort
  (cd .ort && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "onnxruntime-node@$ort_version") ||
    say "warning: npm could not install onnxruntime-node: its tests will skip" >&2
}
if [ "$mode" = test ]; then install_onnx_runtime; fi

# configure_and_build DIR [cmake options...]. Through ccache, with paths taken
# relative to the checkout: build/ then reuses every object of build-core/ that
# LibTorch does not change (about 150 of its 250 compilations, measured).
# OCTET_BUILD_TARGETS (space-separated) builds only those targets.
configure_and_build() {
  local dir=$1 launcher=() targets=()
  shift
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  [ -n "${OCTET_BUILD_TARGETS:-}" ] && read -ra targets <<<"--target $OCTET_BUILD_TARGETS"
  say "configuring $dir/"
  mkdir -p "$dir"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=/usr/bin/python3 "${launcher[@]}" "$@" \
    >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log" >&2; return 1; }
  grep '^-- octet:' "$dir/configure.log" || true  # what was found and what is built
  say "building $dir/ ${targets[*]:+(${targets[*]:1})} ([done/total] steps below)"
  CCACHE_BASEDIR=$PWD cmake --build "$dir" "${targets[@]}"
  say "built $dir/"
}

# run_tests DIR [ctest options...]: the suite with ctest, then one line of ran /
# passed / failed / skipped by reason (tests/tools/ctest_summary.py, from
# ctest's JUnit file); returns ctest's exit status. Two entries at a time
# (OCTET_TEST_JOBS): most are short processes whose start-up (LibTorch's
# loading, a model built) leaves a core idle; OpenMP threads wait passively,
# so that two entries' threads do not spin against each other.
run_tests() {
  local dir=$1 status=0
  shift
  OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} \
    ctest --test-dir "$dir" -j "${OCTET_TEST_JOBS:-2}" --output-on-failure --output-junit ctest-junit.xml "$@" ||
    status=$?
  /usr/bin/python3 tests/tools/ctest_summary.py "$dir/ctest-junit.xml" || true
  return $status
}

case "$mode" in
  core)
    configure_and_build build-core -DOCTET_WITH_TORCH=OFF
    run_tests build-core
    ;;
  test)
    say "1/2 without LibTorch (build-core/)"
    configure_and_build build-core -DOCTET_WITH_TORCH=OFF
    run_tests build-core
    say "2/2 with LibTorch (build/): the entries that need it or change with it (label torch)"
    configure_and_build build -DOCTET_WITH_CUDA=ON -DBUILD_TESTING=ON
    run_tests build -L '^torch$'
    ;;
  build) configure_and_build build -DOCTET_WITH_CUDA=ON -DBUILD_TESTING=ON ;;
  sanitize)
    # Line tables only (-g1): the reports' stacks still name files and lines, for less
    # compiling. -O1: GCC's instrumented -O2 took 3.5x a plain build's time (cmd_eval.cpp
    # 74 s, against 42 s at -O1), and the build, not the run, is most of this stage.
    # Debug info names the checkout's folder, so ccache keys every object on it unless the
    # folder is mapped away: without the map a clone elsewhere rebuilt all (617 s, 2026-12-06).
    configure_and_build build-sanitize -DOCTET_WITH_TORCH=OFF -DOCTET_WITH_CUDA=OFF \
      -DOCTET_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG -fdebug-prefix-map=$PWD=."
    # Without the zoo's accuracy entries (label full_test_set): 10,000 images each through
    # code the other entries run on small inputs, and most of the run's time under ASan. The
    # operator harness runs in shards there, without its largest networks on most kernels
    # (tests/CMakeLists.txt, octet_sanitized_shards); the test stage still runs them.
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
      run_tests build-sanitize -LE '^full_test_set$'
    ;;
  fuzz) exec tools/fuzz.sh all "${OCTET_FUZZ_SECONDS:-30}" ;;
  demo)
    # Only what the job runs: the command line (octet, and octet-torch, which trains), not the
    # test suite; the CUDA backends only where a GPU answers (build and test turn both back on).
    cuda=OFF
    nvidia-smi -L >/dev/null 2>&1 && cuda=ON
    OCTET_BUILD_TARGETS=octet configure_and_build build -DOCTET_WITH_CUDA=$cuda -DBUILD_TESTING=OFF
    say "running octet pipeline (train LeNet-5 on Fashion-MNIST, calibrate, quantize, compare)"
    build/tools/octet pipeline
    say "the demo's job is done"
    ;;
esac
