#!/bin/sh
# Forecasts each seed-2 ResNet from its first 25% and 50% alone, as a run still
# going would be (the log cut off, so the target loss at 68% comes from the
# seed-1 runs), with the four complete seed-1 runs as its family weighted by
# depth. No forecasting choice saw the seed-2 runs. Run from the repository root:
#   datasets/forecast-logs/heldout_seed2.sh [OCTET]
set -e
octet=${1:-build/tools/octet}
logs=datasets/forecast-logs
cut_dir=$(mktemp -d)
trap 'rm -rf "$cut_dir"' EXIT
for depth in 20 32 44 56; do
  for percent in 25 50; do
    cut=$cut_dir/resnet${depth}_seed2_$percent
    head -n $((9600 * percent / 100 + 1)) $logs/resnet${depth}_seed2.csv > $cut.csv
    cp $logs/resnet${depth}_seed2.json $cut.json
    echo "resnet$depth seed 2, first $percent%:"
    "$octet" forecast fit --log $cut.csv --target-acc 68 --depth $depth \
      --with-run resnet20=$logs/resnet20.csv --with-run resnet32=$logs/resnet32.csv \
      --with-run resnet44=$logs/resnet44.csv --with-run resnet56=$logs/resnet56.csv | grep "^steps to\|^with the\|^blended"
  done
done
