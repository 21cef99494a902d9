#!/usr/bin/env bash
# Bad input as a new user would give it: every case must exit with status 1,
# print "octet: error:" and a message naming the problem, and leave no output
# file behind.   bad_inputs.sh OCTET_BINARY SOURCE_DIR
set -uo pipefail
octet=$1
src=$2
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
make_file() { /usr/bin/python3 -c "import struct, json, sys; sys.stdout.buffer.write($2)" >"$dir/$1"; }
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
/usr/bin/python3 -c "import sys; sys.stdout.buffer.write(bytes([200]) + bytes(3072))" >"$dir/cifar_label/test_batch.bin"
cifar=$src/models/zoo/lenet5_cifar10.octet
expect "not a multiple of the 3073-byte" "$octet" eval --checkpoint "$cifar" --data "$dir/cifar_size"
expect "label 200" "$octet" eval --checkpoint "$cifar" --data "$dir/cifar_label"
expect "no-such-folder" "$octet" eval --checkpoint "$cifar" --data "$dir/no-such-folder"

# Outputs in missing folders, bad options.
expect "" "$octet" quantize --checkpoint "$lenet" -o "$dir/missing/out.octet" --calib-samples 16
expect "calib" "$octet" quantize --checkpoint "$lenet" -o "$dir/out.octet" --calib-samples 0
expect "calib" "$octet" quantize --checkpoint "$lenet" -o "$dir/out.octet" --calib-samples -5
expect "method" "$octet" quantize --checkpoint "$lenet" -o "$dir/out.octet" --method nonsense
expect "--limit must be 0" "$octet" eval --checkpoint "$lenet" --limit -1

[ $failures -eq 0 ] && echo "every bad input refused with status 1, a message and no file"
exit $((failures > 0))
