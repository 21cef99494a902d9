#!/usr/bin/env bash
# Builds octet's libFuzzer targets (clang, AddressSanitizer and
# UndefinedBehaviorSanitizer) in build-fuzz/ and runs them:
#   tools/fuzz.sh TARGET|all SECONDS [libFuzzer options...]
# TARGET is one of: safetensors checkpoint quantized cifar10 idx npy image image_list onnx_import. Each run
# starts from the committed seeds in tests/fuzz/corpus/TARGET and grows a
# working corpus in build-fuzz/corpus/TARGET; a crash is written to
# build-fuzz/findings/TARGET/ and the script exits non-zero. The last line of
# each run's log (build-fuzz/logs/TARGET.log) holds the executions done. The
# targets run side by side, one per core (OCTET_FUZZ_JOBS).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(safetensors checkpoint quantized cifar10 idx npy image image_list onnx_import)
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
if [ $# -lt 2 ] || ! [[ $2 =~ ^[0-9]+$ ]] || [ "$2" -lt 1 ]; then
  echo "usage: tools/fuzz.sh TARGET|all SECONDS [libFuzzer options...]   (targets: ${targets[*]})" >&2
  exit 2
fi
which=$1
seconds=$2
shift 2
if [ "$which" = all ]; then
  selected=("${targets[@]}")
elif [[ " ${targets[*]} " == *" $which "* ]]; then
  selected=("$which")
else
  echo "tools/fuzz.sh: unknown target '$which' (targets: ${targets[*]})" >&2
  exit 2
fi

build=${OCTET_FUZZ_BUILD:-build-fuzz}
if [ ! -f "$build/build.ninja" ]; then
  # Line tables only (-g1): a finding's stack still names files and lines, for less compiling.
  # Through ccache, the checkout's folder mapped out of the debug info (as tools/setup.sh's
  # sanitize build): a clone elsewhere then reuses the objects.
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOCTET_FUZZ=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG -fdebug-prefix-map=$PWD=." "${launcher[@]}" \
    -DOCTET_WITH_TORCH=OFF -DOCTET_WITH_CUDA=OFF -DPython_EXECUTABLE=/usr/bin/python3 >/dev/null
fi
CCACHE_BASEDIR=$PWD cmake --build "$build" --target "${selected[@]/#/fuzz_}"

# The targets write each input to a scratch file: on tmpfs that is 10 times faster.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  export TMPDIR=/dev/shm
fi

# One target: its log, and a status file read below (the targets run side by side).
# A few hundred bytes of progressive JPEG may declare octet's largest image
# (179 megapixels; 1.1 GB of rss measured at 130): the image target gets more memory.
fuzz_one() {
  local target=$1 corpus=$build/corpus/$1 findings=$build/findings/$1 rss=2048
  shift
  mkdir -p "$corpus" "$findings"
  [ "$target" = image ] && rss=3072
  if "$build/tests/fuzz/fuzz_$target" "$corpus" "tests/fuzz/corpus/$target" \
      -max_total_time="$seconds" -rss_limit_mb="$rss" -timeout=20 -max_len=65536 \
      -artifact_prefix="$findings/" -print_final_stats=1 "$@" >"$build/logs/$target.log" 2>&1; then
    echo passed >"$build/logs/$target.status"
  else
    echo failed >"$build/logs/$target.status"
  fi
}

# As many targets at a time as there are cores (OCTET_FUZZ_JOBS): each is one process.
jobs=${OCTET_FUZZ_JOBS:-$(nproc)}
mkdir -p "$build/logs"
for target in "${selected[@]}"; do
  rm -f "$build/logs/$target.status"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  echo "fuzzing $target for $seconds s (log: $build/logs/$target.log)"
  fuzz_one "$target" "$@" &
done
wait

status=0
clean=0
for target in "${selected[@]}"; do
  if [ "$(cat "$build/logs/$target.status" 2>/dev/null)" = passed ]; then
    clean=$((clean + 1))
  else
    echo "tools/fuzz.sh: $target found a crash (see $build/logs/$target.log and $build/findings/$target/)" >&2
    status=1
  fi
  echo "$target: $(grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$build/logs/$target.log" | tail -1 || true)"
done
# One line a CI log reader understands: targets that ran clean, and those that crashed.
echo "fuzz: $clean passed, $((${#selected[@]} - clean)) failed"
exit $status
