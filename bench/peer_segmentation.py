#!/usr/bin/python3
"""A trained segmentation net, int8 against float: octet and torch.ao on the same weights and masks.

There is no segmentation dataset on the build machine, so this makes one from Fashion-MNIST (Debian's
dataset-fashion-mnist): 64 x 64 canvases of two garments each at random places, the mask of a garment's pixels
(brighter than 40 of 255) its class + 1, the rest background (class 0): 11 classes. It trains a small U-Net on them
(BatchNorm, max-pool down, bilinear or transposed-conv up, skip connections concatenated; Adam, a few epochs on the
CPU; `--up corners`: bilinear with corners aligned, as Pytorch-UNet's bilinear=True), exports it to ONNX, then:

  octet: import, quantize (--calib-data: 256 training canvases; each --methods), eval with --eval-labels masks;
  torch.ao: FX graph mode post-training static quantization (onednn's default qconfig, the same 256 canvases).

Prints float's and each int8's pixel accuracy and mean IoU (the mean over the classes labelled or predicted, as octet
computes it) on the test canvases, and int8's per-pixel agreement with float. Needs the Debian torch (1.13) and
numpy; run with /usr/bin/python3 from the source folder after a build:

  bench/peer_segmentation.py --octet build/tools/octet --up bilinear
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CLASSES = 11
SIDE = 64
MEAN, STD = 0.1, 0.3


def fashion_mnist(folder, split):
    import gzip
    prefix = "train" if split == "train" else "t10k"
    with gzip.open(os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(os.path.join(folder, f"{prefix}-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    return images, labels


def canvases(images, labels, count, seed):
    """`count` normalised 1 x 64 x 64 canvases of two garments each and their masks (uint8, 0: background)."""
    rng = np.random.default_rng(seed)
    x = np.zeros((count, 1, SIDE, SIDE), np.float32)
    masks = np.zeros((count, SIDE, SIDE), np.uint8)
    for i in range(count):
        for k in rng.integers(0, len(images), 2):
            r, c = rng.integers(0, SIDE - 28, 2)
            garment = images[k] / 255.0
            window = x[i, 0, r:r + 28, c:c + 28]
            np.maximum(window, garment, out=window)
            masks[i, r:r + 28, c:c + 28][images[k] > 40] = labels[k] + 1
    return (x - MEAN) / STD, masks


def conv_bn(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, 1, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU())


class UNet(nn.Module):
    def __init__(self, up):
        super().__init__()
        self.enc1 = nn.Sequential(conv_bn(1, 16), conv_bn(16, 16))
        self.enc2 = nn.Sequential(conv_bn(16, 32), conv_bn(32, 32))
        self.mid = nn.Sequential(conv_bn(32, 64), conv_bn(64, 64))
        self.dec2, self.dec1 = conv_bn(96, 32), conv_bn(48, 16)
        self.fc = nn.Conv2d(16, CLASSES, 1)
        if up == "transposed":
            self.up2 = nn.ConvTranspose2d(64, 64, 2, 2)
            self.up1 = nn.ConvTranspose2d(32, 32, 2, 2)
        else:
            self.up2 = self.up1 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=up == "corners")

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
        return self.fc(self.dec1(torch.cat([self.up1(d2), e1], 1)))


def train(model, x, masks, epochs, batch=64):
    torch.manual_seed(0)
    optimizer = torch.optim.Adam(model.parameters(), 2e-3)
    xs, ys = torch.from_numpy(x), torch.from_numpy(masks.astype(np.int64))
    for epoch in range(epochs):
        model.train()
        order, start, total = torch.randperm(len(xs)), time.time(), 0.0
        for first in range(0, len(xs), batch):
            idx = order[first:first + batch]
            loss = F.cross_entropy(model(xs[idx]), ys[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        print(f"epoch {epoch + 1}: loss {total / len(xs):.4f} ({time.time() - start:.0f} s)", flush=True)
    return model.eval()


def class_maps(model, x, batch=200):
    with torch.no_grad():
        return np.concatenate([model(torch.from_numpy(x[i:i + batch])).argmax(1).numpy()
                               for i in range(0, len(x), batch)])


def scores(predicted, masks):
    """Pixel accuracy and mean IoU (percent), the mean over the classes labelled or predicted."""
    ious = [np.sum((predicted == c) & (masks == c)) / np.sum((predicted == c) | (masks == c))
            for c in range(CLASSES) if np.any((predicted == c) | (masks == c))]
    return 100 * np.mean(predicted == masks), 100 * np.mean(ious)


def torch_ao_int8(model, calibration):
    from torch.ao.quantization import get_default_qconfig, get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "onednn"
    start = time.time()
    # torch.ao refuses per-channel weights for ConvTranspose2d ("not supported yet"): per-tensor for those.
    mapping = get_default_qconfig_mapping("onednn").set_object_type(nn.ConvTranspose2d, get_default_qconfig("qnnpack"))
    prepared = prepare_fx(model, mapping, (torch.from_numpy(calibration[:1]),))
    with torch.no_grad():
        for first in range(0, len(calibration), 64):
            prepared(torch.from_numpy(calibration[first:first + 64]))
    quantized = convert_fx(prepared)
    return quantized, time.time() - start


def octet(args, *command):
    result = subprocess.run([args.octet, *map(str, command)], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"octet {command[0]} failed: {result.stderr.strip()}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--octet", default="build/tools/octet")
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--up", choices=["bilinear", "corners", "transposed"], default="bilinear")
    parser.add_argument("--train", type=int, default=6000, help="training canvases")
    parser.add_argument("--test", type=int, default=1000, help="test canvases")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--methods", default="auto,max", help="octet quantize --method values, comma-separated")
    parser.add_argument("--keep", help="a folder to keep the model, data and int8 models in")
    parser.add_argument("--reuse", action="store_true", help="the PyTorch weights --keep holds, if any: no training")
    args = parser.parse_args()
    torch.set_num_threads(os.cpu_count())

    train_images, train_labels = fashion_mnist(args.data, "train")
    test_images, test_labels = fashion_mnist(args.data, "test")
    x_train, m_train = canvases(train_images, train_labels, args.train, 1)
    x_test, m_test = canvases(test_images, test_labels, args.test, 2)
    folder = args.keep or tempfile.mkdtemp(prefix="octet-segmentation-")
    os.makedirs(folder, exist_ok=True)
    weights = os.path.join(folder, f"unet_{args.up}.pt")
    torch.manual_seed(0)
    model = UNet(args.up)
    if args.reuse and os.path.exists(weights):
        model.load_state_dict(torch.load(weights))
        model.eval()
    else:
        train(model, x_train, m_train, args.epochs)
        torch.save(model.state_dict(), weights)
    onnx_path = os.path.join(folder, f"unet_{args.up}.onnx")
    torch.onnx.export(model, torch.zeros(1, 1, SIDE, SIDE), onnx_path, opset_version=13, input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "n"}, "logits": {0: "n"}})
    calibration = x_train[:256]
    for name, array in {"calib.npy": calibration, "test.npy": x_test, "masks.npy": m_test}.items():
        np.save(os.path.join(folder, name), array)

    float_maps = class_maps(model, x_test)
    rows = [("PyTorch float", *scores(float_maps, m_test), None, None)]
    checkpoint = os.path.join(folder, "unet.octet")
    octet(args, "import", onnx_path, "-o", checkpoint)
    for method in args.methods.split(","):
        quantized = os.path.join(folder, f"unet.{method}.int8")
        start = time.time()
        octet(args, "quantize", "--checkpoint", checkpoint, "--calib-data", os.path.join(folder, "calib.npy"),
              "--method", method, "-o", quantized)
        seconds = time.time() - start
        report = json.loads(octet(args, "eval", "--checkpoint", checkpoint, "--quantized", quantized, "--eval-data",
                                  os.path.join(folder, "test.npy"), "--eval-labels", os.path.join(folder, "masks.npy"),
                                  "--no-layers", "--json", "-"))
        if len(rows) == 1:
            rows.append(("octet float", report["float_top1"], report["float_mean_iou"], None, None))
        rows.append((f"octet int8 ({method})", report["int8_top1"], report["int8_mean_iou"], report["agreement"],
                     seconds))
    int8_model, seconds = torch_ao_int8(model, calibration)
    int8_maps = class_maps(int8_model, x_test)
    rows.append(("torch.ao int8 (onednn, FX)", *scores(int8_maps, m_test), 100 * np.mean(int8_maps == float_maps),
                 seconds))

    print(f"\nU-Net ({args.up} up), {args.test} test canvases of {SIDE} x {SIDE}, {CLASSES} classes; kept in {folder}")
    print(f"{'model':30} {'pixel acc %':>11} {'mean IoU %':>10} {'agreement %':>11} {'quantize s':>10}")
    for name, accuracy, iou, agreement, seconds in rows:
        extra = f" {agreement:11.2f} {seconds:10.1f}" if agreement is not None else ""
        print(f"{name:30} {accuracy:11.2f} {iou:10.2f}{extra}")


if __name__ == "__main__":
    main()
