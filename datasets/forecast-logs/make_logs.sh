#!/bin/sh
# Makes the step logs and epoch records in this folder with octet train: CPU,
# one LibTorch thread, one run after another, under nice (the 2-core machine is
# shared). Recipes chosen for the smooth, falling curves the Optimus model
# describes: a constant learning rate, after a short linear warm-up for the
# ResNets (deep ResNets at a full rate from the first step rise before they
# fall). Run from the repository root:
#   datasets/forecast-logs/make_logs.sh [OCTET] [CIFAR10_DIR] [OUT_DIR]
set -e
octet=${1:-build/tools/octet}
cifar=${2:-.data/cifar-10-batches-bin}
out=${3:-datasets/forecast-logs}
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
# ResNet-20 at other learning rates: NAME LR SEED.
resnet20_at() {
  run "$1" --model resnet20 --dataset cifar10 --data "$cifar" --train-samples 15360 --batch-size 16 \
    --epochs 10 --test-samples 1000 --lr "$2" --warmup-epochs 0.1 --seed "$3"
}
# LeNet-5 on Fashion-MNIST, 938 steps an epoch: NAME EPOCHS LR SEED.
lenet5() {
  run "$1" --model lenet5 --dataset fashion-mnist --batch-size 64 --epochs "$2" --lr "$3" --seed "$4"
}
# Seed 1 (lr 0.01 is resnet20 above): a family whose runs reach a target at different steps.
for lr in 0.005 0.007 0.014; do resnet20_at resnet20_lr$lr $lr 1; done
# 3 epochs, three learning rates, two seeds.
for lr in 0.005 0.01 0.02; do
  for seed in 1 2; do lenet5 lenet5_lr${lr}_seed$seed 3 $lr $seed; done
done
# Held out, made after the family forecast was fixed: 3 epochs at five learning
# rates with seeds 3 and 4; 10 epochs at the three learning rates with seeds 1
# and 2, and at the five with seed 4.
for seed in 3 4; do
  for lr in 0.005 0.007 0.01 0.014 0.02; do lenet5 lenet5_lr${lr}_seed$seed 3 $lr $seed; done
done
for lr in 0.005 0.01 0.02; do
  for seed in 1 2; do lenet5 lenet5_e10_lr${lr}_seed$seed 10 $lr $seed; done
done
for lr in 0.005 0.007 0.01 0.014 0.02; do lenet5 lenet5_e10_lr${lr}_seed4 10 $lr 4; done
# Held out, made after the blend with the family's mean step was fixed: LeNet-5
# with seed 5 (3 and 10 epochs, five learning rates) and ResNet-20 with seed 3
# at four learning rates.
for lr in 0.005 0.007 0.01 0.014 0.02; do
  lenet5 lenet5_lr${lr}_seed5 3 $lr 5
  lenet5 lenet5_e10_lr${lr}_seed5 10 $lr 5
done
for lr in 0.005 0.007 0.01 0.014; do resnet20_at resnet20_lr${lr}_seed3 $lr 3; done
