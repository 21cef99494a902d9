#!/bin/sh
# Makes the step logs and epoch records in this folder with octet train: CPU,
# one LibTorch thread, one run after another, under nice (the 2-core machine is
# shared). Recipes chosen for the smooth, falling curves the Optimus model
# describes: a constant learning rate, after a short linear warm-up for the
# ResNets (deep ResNets at a full rate from the first step rise before they
# fall). Run from the repository root:
#   forecast/logs/make_logs.sh [OCTET] [CIFAR10_DIR] [OUT_DIR]
set -e
octet=${1:-build/tools/octet}
cifar=${2:-.data/cifar-10-batches-bin}
out=${3:-forecast/logs}
export OMP_WAIT_POLICY=passive
run() {
  name=$1
  shift
  nice "$octet" train "$@" --optimizer sgd --schedule constant --threads 1 \
    --step-log "$out/$name.csv" --json "$out/$name.json" > "$out/$name.txt"
}
# CIFAR-10 ResNets: ten passes over the first 15360 training images (9600
# steps of 16; each epoch scored on the first 1000 test images only), lr 0.01
# after a warm-up of 96 steps from lr/10; seed 1 (resnetD), and seed 2
# (resnetD_seed2, made later as runs no forecasting choice had seen).
for seed in 1 2; do
  for depth in 20 32 44 56; do
    name=resnet$depth
    [ $seed = 1 ] || name=resnet${depth}_seed$seed
    run $name --model resnet$depth --dataset cifar10 --data "$cifar" --train-samples 15360 --batch-size 16 \
      --epochs 10 --test-samples 1000 --lr 0.01 --warmup-epochs 0.1 --seed $seed
  done
done
# ResNet-20 at other learning rates (seed 1; lr 0.01 is resnet20 above): a
# family whose runs reach a target at different steps.
for lr in 0.005 0.007 0.014; do
  run resnet20_lr$lr --model resnet20 --dataset cifar10 --data "$cifar" --train-samples 15360 --batch-size 16 \
    --epochs 10 --test-samples 1000 --lr $lr --warmup-epochs 0.1 --seed 1
done
# LeNet-5 on Fashion-MNIST: 3 epochs of 938 steps, three learning rates, two seeds.
for lr in 0.005 0.01 0.02; do
  for seed in 1 2; do
    run lenet5_lr${lr}_seed$seed --model lenet5 --dataset fashion-mnist --batch-size 64 --epochs 3 --lr $lr --seed $seed
  done
done
# Held-out LeNet-5 runs, made after every forecasting choice was fixed: the
# same recipe at five learning rates with seeds 3 and 4; ten epochs (9380
# steps) at the first three learning rates with seeds 1 and 2, and at the five
# with seed 4.
for seed in 3 4; do
  for lr in 0.005 0.007 0.01 0.014 0.02; do
    run lenet5_lr${lr}_seed$seed --model lenet5 --dataset fashion-mnist --batch-size 64 --epochs 3 --lr $lr --seed $seed
  done
done
for lr in 0.005 0.01 0.02; do
  for seed in 1 2; do
    run lenet5_e10_lr${lr}_seed$seed --model lenet5 --dataset fashion-mnist --batch-size 64 --epochs 10 --lr $lr --seed $seed
  done
done
for lr in 0.005 0.007 0.01 0.014 0.02; do
  run lenet5_e10_lr${lr}_seed4 --model lenet5 --dataset fashion-mnist --batch-size 64 --epochs 10 --lr $lr --seed 4
done
