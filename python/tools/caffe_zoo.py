"""Caffe's CNNs as the ONNX Model Zoo has them, with random weights, through octet: bvlc_alexnet
(227x227, grouped convs, an LRN after each of the first two ReLUs) and bvlc_googlenet (224x224,
LRNs after the stem's pool and its 3x3 conv, max pools of ceil mode, nine inception blocks whose
branches are concatenated, a 7x7 average pool). The weights are scaled so that activations reach
tens, where the LRNs' alpha weighs the squares. Each is exported by torch.onnx (opset 13, free batch
size, each LRN one node), imported by `octet import`, its float logits compared with ONNX Runtime
fp32 and PyTorch on 32 random inputs (max |difference| over the largest logit), quantized on 16 of
them (`--method max --weight-rounding nearest`) and run in int8 on the CPU (top-1 agreement and
logit cosine with float). Then time it beside ONNX Runtime:

    PYTHONPATH=build/python OCTET_BIN=build/tools/octet /usr/bin/python3 python/tools/caffe_zoo.py [NAME ...]
    build/tools/octet bench infer --checkpoint /tmp/octet_caffe/alexnet.octet \\
        --quantized /tmp/octet_caffe/alexnet.int8.octet --onnx /tmp/octet_caffe/alexnet.onnx --batch 1,16"""

import argparse
import os
import pathlib
import sys

import numpy as np
import torch

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SOURCE_DIR / "python" / "tests"))
import octet  # noqa: E402
import ort_peer  # noqa: E402
from test_onnx_import_classic_forms import Lrn  # noqa: E402
from torchvision_zoo import run  # noqa: E402 (python/tools, the script's own folder)

nn = torch.nn


def lrn(x):
    return Lrn.apply(x, 5, 1e-4, 0.75, 1.0)  # Caffe's, in both models


def ceil_pool(x, stride=2):
    return nn.functional.max_pool2d(x, 3, stride, padding=0 if stride == 2 else 1, ceil_mode=stride == 2)


class BvlcAlexNet(nn.Module):
    size, weight_scale = 227, 3.0

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 96, 11, stride=4)
        self.c2 = nn.Conv2d(96, 256, 5, padding=2, groups=2)
        self.c3 = nn.Conv2d(256, 384, 3, padding=1)
        self.c4 = nn.Conv2d(384, 384, 3, padding=1, groups=2)
        self.c5 = nn.Conv2d(384, 256, 3, padding=1, groups=2)
        self.f6, self.f7, self.f8 = nn.Linear(256 * 6 * 6, 4096), nn.Linear(4096, 4096), nn.Linear(4096, 1000)

    def forward(self, x):
        def pool(t):
            return nn.functional.max_pool2d(t, 3, 2)

        x = pool(lrn(torch.relu(self.c1(x))))
        x = pool(lrn(torch.relu(self.c2(x))))
        x = pool(torch.relu(self.c5(torch.relu(self.c4(torch.relu(self.c3(x)))))))
        return self.f8(torch.relu(self.f7(torch.relu(self.f6(x.flatten(1))))))


class Inception(nn.Module):
    def __init__(self, c, one, three_reduce, three, five_reduce, five, pool):
        super().__init__()
        self.one = nn.Conv2d(c, one, 1)
        self.three = nn.Sequential(nn.Conv2d(c, three_reduce, 1), nn.ReLU(),
                                   nn.Conv2d(three_reduce, three, 3, padding=1))
        self.five = nn.Sequential(nn.Conv2d(c, five_reduce, 1), nn.ReLU(), nn.Conv2d(five_reduce, five, 5, padding=2))
        self.pool = nn.Conv2d(c, pool, 1)

    def forward(self, x):
        branches = [self.one(x), self.three(x), self.five(x), self.pool(ceil_pool(x, stride=1))]
        return torch.cat([torch.relu(b) for b in branches], 1)


class BvlcGoogLeNet(nn.Module):
    size, weight_scale = 224, 1.5

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3)
        self.reduce2, self.conv2 = nn.Conv2d(64, 64, 1), nn.Conv2d(64, 192, 3, padding=1)
        self.blocks3 = nn.Sequential(Inception(192, 64, 96, 128, 16, 32, 32),
                                     Inception(256, 128, 128, 192, 32, 96, 64))
        self.blocks4 = nn.Sequential(Inception(480, 192, 96, 208, 16, 48, 64),
                                     Inception(512, 160, 112, 224, 24, 64, 64),
                                     Inception(512, 128, 128, 256, 24, 64, 64),
                                     Inception(512, 112, 144, 288, 32, 64, 64),
                                     Inception(528, 256, 160, 320, 32, 128, 128))
        self.blocks5 = nn.Sequential(Inception(832, 256, 160, 320, 32, 128, 128),
                                     Inception(832, 384, 192, 384, 48, 128, 128))
        self.fc = nn.Linear(1024, 1000)

    def forward(self, x):
        x = lrn(ceil_pool(torch.relu(self.conv1(x))))
        x = ceil_pool(lrn(torch.relu(self.conv2(torch.relu(self.reduce2(x))))))
        x = ceil_pool(self.blocks4(ceil_pool(self.blocks3(x))))
        x = nn.functional.avg_pool2d(self.blocks5(x), 7, 1)
        return self.fc(nn.functional.dropout(x, 0.4, self.training).flatten(1))


MODELS = {"alexnet": BvlcAlexNet, "googlenet": BvlcGoogLeNet}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", default=list(MODELS), help="alexnet, googlenet (default: both)")
    p.add_argument("--out", default="/tmp/octet_caffe", help="folder for the .onnx and octet files")
    a = p.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    octet_bin = os.environ.get("OCTET_BIN", str(SOURCE_DIR / "build" / "tools" / "octet"))
    for seed, name in enumerate(a.names):
        torch.manual_seed(7 + seed)
        model = MODELS[name]().eval()
        for parameter in model.parameters():
            parameter.data *= model.weight_scale
        onnx_path, checkpoint, int8 = out / f"{name}.onnx", out / f"{name}.octet", out / f"{name}.int8.octet"
        torch.onnx.export(model, torch.zeros(1, 3, model.size, model.size), str(onnx_path), opset_version=13,
                          input_names=["data"], output_names=["prob"],
                          dynamic_axes={"data": {0: "n"}, "prob": {0: "n"}})
        print(run([octet_bin, "import", str(onnx_path), "-o", str(checkpoint)]).strip())
        inputs = np.random.default_rng(5).normal(size=(32, 3, model.size, model.size)).astype(np.float32)
        np.save(out / f"{name}_calibration.npy", inputs[:16])
        got = octet.load_checkpoint(str(checkpoint)).predict(inputs)
        ort = ort_peer.run(str(onnx_path), [inputs])[0]
        with torch.no_grad():
            torch_logits = model(torch.from_numpy(inputs)).numpy()
        print(f"{name} float: within {np.abs(got - ort).max() / np.abs(ort).max():.1e} of ORT fp32, "
              f"{np.abs(got - torch_logits).max() / np.abs(torch_logits).max():.1e} of PyTorch")
        run([octet_bin, "quantize", "--checkpoint", str(checkpoint), "--calib-data",
             str(out / f"{name}_calibration.npy"), "--method", "max", "--weight-rounding", "nearest", "-o", str(int8)])
        int8_logits = octet.load_quantized(str(int8)).predict(inputs, dequantize=True).astype(np.float64)
        reference = got.astype(np.float64)
        cosine = np.sum(int8_logits * reference) / np.sqrt(np.sum(int8_logits ** 2) * np.sum(reference ** 2))
        print(f"{name} int8: top-1 agreement {np.mean(int8_logits.argmax(1) == reference.argmax(1)):.3f}, "
              f"cosine {cosine:.4f}", flush=True)


if __name__ == "__main__":
    main()
