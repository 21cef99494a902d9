#!/usr/bin/env bash
# Bad input as a new user would give it: every case must exit with status 1,
# print "octet: error:" and a message naming the problem, and leave no output
# file behind.   bad_inputs.sh OCTET_BINARY SOURCE_DIR
# $PYTHON (default python3; the standard library only) writes the bad files.
set -uo pipefail
octet=$1
src=$2
python=${PYTHON:-python3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
lenet=$src/models/zoo/lenet5_fmnist.octet
failures=0

# expect PATTERN COMMAND...: status 1, PATTERN in stderr, no $dir/out*.
expect() {
  local pattern=$1
  shift
  local err status
  err=$("$@" 2>&1 >/dev/null)
  status=$?
  local left
  left=$(compgen -G "$dir/out*")
  if [ $status -ne 1 ] || ! grep -q -- "octet: error: .*$pattern" <<<"$err" || [ -n "$left" ]; then
    echo "FAIL (status $status${left:+, left $left}): $*"
    echo "  stderr: $err"
    failures=$((failures + 1))
    rm -rf "$dir"/out*
  fi
}

# safetensors files: write_file NAME PYTHON-BYTES-EXPRESSION
make_file() { "$python" -c "import struct, json, sys; sys.stdout.buffer.write($2)" >"$dir/$1"; }
make_file empty.octet "b''"
make_file short.octet "b'abc'"
make_file huge_header.octet "struct.pack('<Q', 1 << 62) + b'{}'"
make_file not_json.octet "struct.pack('<Q', 4) + b'{{{{'"
header='{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}'
make_file overlap.octet "struct.pack('<Q', len('$header')) + b'$header' + bytes(12)"
header='{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,80]}}'
make_file offsets_range.octet "struct.pack('<Q', len('$header')) + b'$header' + bytes(8)"
header='{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}'
make_file dtype.octet "struct.pack('<Q', len('$header')) + b'$header' + bytes(8)"
head -c 100000 "$lenet" >"$dir/truncated.octet"
head -c 5000 /dev/urandom >"$dir/random.octet"

for f in empty short huge_header not_json overlap offsets_range dtype truncated random; do
  expect "$f.octet" "$octet" quantize --checkpoint "$dir/$f.octet" -o "$dir/out.octet"
  expect "$f.octet" "$octet" predict --quantized "$dir/$f.octet" --limit 1 --json "$dir/out.json"
done
expect "missing.octet" "$octet" eval --checkpoint "$dir/missing.octet"
expect "not an octet quantized model" "$octet" predict --quantized "$lenet" --limit 1 --json "$dir/out.json"

# CIFAR-10 files of the wrong size or with a bad label.
mkdir -p "$dir/cifar_size" "$dir/cifar_label"
head -c 3000 /dev/zero >"$dir/cifar_size/test_batch.bin"
"$python" -c "import sys; sys.stdout.buffer.write(bytes([200]) + bytes(3072))" >"$dir/cifar_label/test_batch.bin"
cifar=$src/models/zoo/lenet5_cifar10.octet
expect "not a multiple of the 3073-byte" "$octet" eval --checkpoint "$cifar" --data "$dir/cifar_size"
expect "label 200" "$octet" eval --checkpoint "$cifar" --data "$dir/cifar_label"
expect "no-such-folder" "$octet" eval --checkpoint "$cifar" --data "$dir/no-such-folder"

# Outputs in missing folders, bad options.
expect "cannot open '$dir/missing/out.octet.tmp-[0-9]*' for writing" \
  "$octet" quantize --checkpoint "$lenet" -o "$dir/missing/out.octet" --calib-samples 16
expect "calib" "$octet" quantize --checkpoint "$lenet" -o "$dir/out.octet" --calib-samples 0
expect "calib" "$octet" quantize --checkpoint "$lenet" -o "$dir/out.octet" --calib-samples -5
expect "method" "$octet" quantize --checkpoint "$lenet" -o "$dir/out.octet" --method nonsense
expect "no node 'conv9'" "$octet" quantize --checkpoint "$lenet" -o "$dir/out.octet" --float-nodes conv1,conv9
expect "'fc3' is the output" "$octet" quantize --checkpoint "$lenet" -o "$dir/out.octet" --float-nodes fc3
expect "--limit must be 0" "$octet" eval --checkpoint "$lenet" --limit -1

# --backend names a backend of the registry (runtime/engine.h); one this build or machine lacks is
# refused saying why (without CUDA: built without it; without a GPU: no usable CUDA device).
"$octet" quantize --checkpoint "$lenet" -o "$dir/lenet.int8.octet" --method max --weight-rounding nearest \
  --calib-samples 64 >/dev/null 2>&1
expect "unknown backend 'tpu' (known: cpu" "$octet" eval --checkpoint "$lenet" --quantized "$dir/lenet.int8.octet" \
  --backend tpu --json "$dir/out.json"
# An export target that does not exist (a build without ONNX refuses any export first).
expect "\(--target bogus: faithful or onnxruntime\|needs the ONNX library\)" "$octet" export \
  --quantized "$dir/lenet.int8.octet" --onnx "$dir/out.onnx" --target bogus
if ! command -v nvidia-smi >/dev/null; then
  expect "cuda-imma.*\(no usable CUDA device\|built without CUDA\)" "$octet" eval --checkpoint "$lenet" \
    --quantized "$dir/lenet.int8.octet" --backend cuda-imma --json "$dir/out.json"
fi

# Data-parallel: torchrun's variables, octet launch's options, a failing rank.
if [[ "$("$octet" train --epochs 0 2>&1)" != *"needs LibTorch"* ]]; then  # a build without LibTorch has no trainer
  train=("$octet" train --json "$dir/out.json")
  expect "WORLD_SIZE is set but RANK is not" env WORLD_SIZE=2 "${train[@]}"
  expect "RANK=2 must be below WORLD_SIZE=2" env RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 "${train[@]}"
  expect "MASTER_PORT=70000 is not a TCP port" env RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=70000 "${train[@]}"
  expect "needs MASTER_ADDR" env RANK=0 WORLD_SIZE=2 "${train[@]}"
  expect "RANK='one'" env RANK=one WORLD_SIZE=2 "${train[@]}"
  expect "--allreduce must be" "${train[@]}" --allreduce sometimes
  expect "--precision tf32 needs --device cuda" "${train[@]}" --precision tf32
  expect "--precision must be" "${train[@]}" --precision fp8
fi
expect "--port must be a TCP port" "$octet" launch -n 2 --port 70000 -- true
expect "-n must be between" "$octet" launch -n 0 -- true
expect "rank 1 of 2 exited with status 3" "$octet" launch -n 2 -- sh -c '[ "$RANK" = 1 ] && exit 3; exec sleep 60'
expect "cannot run 'no-such-program'" "$octet" launch -n 2 -- no-such-program

# Forecasts: a family of one, a run without its log, a loss that is not a number.
logs=$src/datasets/forecast-logs
fit=("$octet" forecast fit --log "$logs/resnet20.csv" --cut 0.5 --target-acc 68 --json "$dir/out.json")
expect "--with-run: give at least 2" "${fit[@]}" --with-run "resnet32=$logs/resnet32.csv"
expect "--with-run 'resnet44': expected NAME=STEP_LOG" "${fit[@]}" --with-run "resnet32=$logs/resnet32.csv" --with-run resnet44
printf 'epoch,step,loss,acc\n1,1,2.3,10\n1,2,nan,12\n' >"$dir/nan.csv"
expect "nan.csv:3: loss is nan" "$octet" forecast fit --log "$dir/nan.csv" --json "$dir/out.json"

# `octet bench infer`'s options, refused before anything is measured.
infer=("$octet" bench infer --checkpoint "$lenet" --json "$dir/out.json")
expect "--batch" "${infer[@]}" --backend cpu --batch 0
expect "--batch" "${infer[@]}" --backend cpu --batch 1,x
expect "--iterations" "${infer[@]}" --backend cpu --iterations 0
expect "--backend cuda-tensorrt is not one" "${infer[@]}" --backend cuda-tensorrt
expect "--cpu-kernels" "${infer[@]}" --backend cpu --cpu-kernels amx
# A batch larger than the machine's memory: the buffers, their bytes and the batch that fits.
expect "a batch of 1000000000 does not fit in memory: its input images (1x28x28 float32) .* need .* TB .* the largest batch that fits is [0-9]" \
  "${infer[@]}" --backend cpu --batch 1000000000

[ $failures -eq 0 ] && echo "every bad input refused with status 1, a message and no file"
exit $((failures > 0))
