#!/usr/bin/env bash
# Determinism: the same `octet quantize` command run twice writes
# byte-identical quantized models. Default options (auto amax, GPTQ, all
# threads), a small calibration set to keep it short. (Another thread count may
# change a float sum's rounding in the float executor, so one scale by an ulp.)
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
