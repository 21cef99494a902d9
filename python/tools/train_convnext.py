"""Trains a small ConvNeXt on CIFAR-10 with PyTorch and exports it as ONNX
(opset 13: LayerNorm and GELU as their steps, the blocks on channels-last
values): torchvision's ConvNeXt blocks, a 2x2 stride-2 stem (32x32 images:
16x16, 8x8 and 4x4 stages), AdamW under a one-cycle schedule, otherwise as
train_mobilenet_v2.py (same data, augmentation, log and export).

    /usr/bin/python3 python/tools/train_convnext.py --data .data/cifar-10-batches-bin \\
        --epochs 10 --out convnext_cifar10.onnx"""

import numpy as np
import torch
from torchvision.models.convnext import CNBlockConfig, ConvNeXt

from train_mobilenet_v2 import arguments, train_and_export


def cifar_convnext(dims, depths):
    stages = [CNBlockConfig(d, dims[k + 1] if k + 1 < len(dims) else None, n)
              for k, (d, n) in enumerate(zip(dims, depths))]
    model = ConvNeXt(stages, stochastic_depth_prob=0.0, num_classes=10)
    stem = model.features[0][0]
    model.features[0][0] = torch.nn.Conv2d(3, stem.out_channels, 2, stride=2)  # 4x4 stride 4 leaves 8x8 of 32x32
    return model


def main():
    p = arguments(__doc__.split("\n\n")[0], epochs=10, lr=4e-3, weight_decay=0.05)
    p.add_argument("--dims", type=int, nargs="+", default=[32, 64, 128], help="channels of each stage")
    p.add_argument("--depths", type=int, nargs="+", default=[2, 2, 2], help="blocks of each stage")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    model = cifar_convnext(a.dims, a.depths).to(memory_format=torch.channels_last)
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    train_and_export(model, optimizer, a, np.random.default_rng(a.seed))


if __name__ == "__main__":
    main()
