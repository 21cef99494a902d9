#!/usr/bin/env bash
# The accuracy table of every calibration method x weight granularity (and the
# course lab's scheme) for one checkpoint, from `octet quantize` + `octet eval`.
#   tools/method_table.sh CHECKPOINT [DATA_DIR] [OCTET_BINARY]
set -euo pipefail
checkpoint=${1:?usage: tools/method_table.sh CHECKPOINT [DATA_DIR] [OCTET_BINARY]}
data=${2:-}
octet=${3:-build/tools/octet}
data_args=()
[ -n "$data" ] && data_args=(--data "$data")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "| method | weights | rounding | float top-1 | int8 top-1 | difference | agreement |"
echo "|---|---|---|---|---|---|---|"
row() {  # method granularity scheme rounding
  local out="$work/q.octet" json="$work/eval.json"
  "$octet" quantize --checkpoint "$checkpoint" "${data_args[@]}" --method "$1" --granularity "$2" --scheme "$3" \
    --weight-rounding "$4" -o "$out" > /dev/null
  "$octet" eval --checkpoint "$checkpoint" "${data_args[@]}" --quantized "$out" --no-layers --json "$json" > /dev/null
  /usr/bin/python3 - "$json" "$1" "$2" "$3" "$4" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
label = sys.argv[2] + (" (lab scheme)" if sys.argv[4] == "lab" else "")
print(f"| {label} | {sys.argv[3]} | {sys.argv[5]} | {r['float_top1']:.2f}% | {r['int8_top1']:.2f}% | "
      f"{r['top1_difference']:+.2f} | {r['agreement']:.2f}% |")
PY
}
for method in max sigma3 percentile entropy mse auto; do
  for granularity in per-channel per-tensor; do row "$method" "$granularity" octet gptq; done
done
row auto per-channel octet nearest
row max per-tensor lab nearest
