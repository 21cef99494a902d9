#!/usr/bin/env bash
# Determinism: the same `octet quantize` command writes byte-identical
# quantized models when run twice, on one thread instead of all, and on every
# path of the float product (graph/ordered_gemm.h: reference, AVX2, AVX-512)
# this CPU has. Default options (auto amax, GPTQ), a small calibration set to
# keep it short.
#   quantize_twice.sh OCTET_BINARY CHECKPOINT
set -euo pipefail
octet=$1
checkpoint=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args=(quantize --checkpoint "$checkpoint" --calib-samples 256 --auto-samples 64)
"$octet" "${args[@]}" -o "$dir/first.octet" >/dev/null
"$octet" "${args[@]}" -o "$dir/second.octet" >/dev/null
cmp "$dir/first.octet" "$dir/second.octet"
echo "two runs wrote byte-identical files ($(stat -c %s "$dir/first.octet") bytes)"
OMP_NUM_THREADS=1 "$octet" "${args[@]}" -o "$dir/one_thread.octet" >/dev/null
cmp "$dir/first.octet" "$dir/one_thread.octet"
echo "one thread: the same bytes"
for path in reference avx2 avx512; do
  if OCTET_ORDERED_GEMM=$path "$octet" "${args[@]}" -o "$dir/$path.octet" >/dev/null 2>"$dir/error"; then
    cmp "$dir/first.octet" "$dir/$path.octet"
    echo "float product on $path: the same bytes"
  elif grep -q "is not a path this CPU has" "$dir/error"; then
    echo "float product on $path: this CPU has no such path"
  else
    cat "$dir/error" >&2
    exit 1
  fi
done
