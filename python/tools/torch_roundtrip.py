#!/usr/bin/python3
"""PyTorch -> octet -> int8: trains LeNet-5 on Fashion-MNIST with PyTorch for a
few epochs, imports it with octet.from_torch, quantizes it with octet and
prints float and int8 top-1 and their agreement on the full test set.

    PYTHONPATH=build/python /usr/bin/python3 python/tools/torch_roundtrip.py --epochs 3 --out lenet5_torch.octet

Needs Debian's python3-torch and numpy (/usr/bin/python3) and octet's module."""

import argparse
import json
import sys
import time

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

import octet


class LeNet5(nn.Module):
    """The course lab's LeNet-5 for 28x28 inputs, named as in octet's lenet5."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="lenet5_torch.octet", help="octet checkpoint to write")
    parser.add_argument("--json", help="write the results as JSON to this file")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)

    info = octet.dataset_info("fashion-mnist")
    train_images, train_labels = octet.load_fashion_mnist(split="train")
    test_images, test_labels = octet.load_fashion_mnist(split="test")
    x_train = torch.from_numpy(octet.normalize(train_images, info["mean"], info["std"]))
    y_train = torch.from_numpy(train_labels.astype(np.int64))
    x_test = octet.normalize(test_images, info["mean"], info["std"])

    model = LeNet5()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        start = time.time()
        order = torch.randperm(len(y_train))
        model.train()
        for first in range(0, len(order), args.batch):
            batch = order[first : first + args.batch]
            loss = F.cross_entropy(model(x_train[batch]), y_train[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch + 1}: loss {loss.item():.3f}, {time.time() - start:.1f} s", file=sys.stderr)

    model.eval()
    with torch.no_grad():
        torch_logits = model(torch.from_numpy(x_test)).numpy()
    checkpoint = octet.from_torch(model, model="lenet5", dataset="fashion-mnist", path=args.out)
    octet_logits = checkpoint.predict(x_test)
    quantized = octet.quantize(checkpoint).model
    report = octet.evaluate(checkpoint, quantized, layers=False)
    results = {
        "epochs": args.epochs,
        "torch_float_top1": octet.top1(torch_logits, test_labels),
        "octet_float_top1": octet.top1(octet_logits, test_labels),
        "max_logit_difference": float(np.abs(octet_logits - torch_logits).max()),
        "float_top1": report["float_top1"],
        "int8_top1": report["int8_top1"],
        "agreement": report["agreement"],
        "images": report["images"],
    }
    for key, value in results.items():
        print(f"{key}: {value:.6g}" if isinstance(value, float) else f"{key}: {value}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
