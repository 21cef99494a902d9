#!/bin/sh
# Makes the step logs and epoch records in this folder (octet train, CPU, one
# thread each, under nice; the runs go in parallel). ResNets train on the first
# 10240 CIFAR-10 training images (--train-samples) for 3 epochs at a constant
# learning rate: 240 steps each, what the shared 2-core machine allowed. Run
# from the repository root:
#   forecast/logs/make_logs.sh [OCTET] [CIFAR10_DIR]
set -e
octet=${1:-build/tools/octet}
cifar=${2:-.data/cifar-10-batches-bin}
out=forecast/logs
common="--optimizer sgd --lr 0.1 --schedule constant --batch-size 128 --threads 1 --seed 1"
nice "$octet" train --model lenet5 --dataset fashion-mnist --epochs 4 $common \
  --step-log $out/lenet5_fashion.csv --json $out/lenet5_fashion.json > $out/lenet5_fashion.txt &
nice "$octet" train --model lenet5 --dataset cifar10 --data "$cifar" --epochs 4 $common \
  --step-log $out/lenet5_cifar10.csv --json $out/lenet5_cifar10.json > $out/lenet5_cifar10.txt &
for depth in 20 32 44 56; do
  nice "$octet" train --model resnet$depth --dataset cifar10 --data "$cifar" --train-samples 10240 --epochs 3 $common \
    --step-log $out/resnet$depth.csv --json $out/resnet$depth.json > $out/resnet$depth.txt &
done
wait
