#!/usr/bin/python3
"""A detection backbone of several outputs, int8 against float: octet and torch.ao on the same weights.

torchvision's ResNet-18 FPN backbone (resnet_fpn_backbone: P2-P5 and the pool level, 256 channels each; random
weights, batch-norm statistics randomised, as no detection weights are on the build machine), exported to ONNX
with its five outputs, then:

  octet: import, quantize (--calib-data: the first --calib inputs; the default method), eval --quantized on the
         next --test inputs: each output's SQNR against float;
  torch.ao: FX graph mode post-training static quantization (onednn's default qconfig, the same inputs);
  with --bench: octet bench infer against ONNX Runtime (fp32, and int8 on octet's export) and LibTorch.

Inputs are normal noise (no images are needed to compare int8 with float). An odd --size (250) makes the FPN's
top-down resizes no whole factor (32 -> 63 pixels). Needs the Debian torch (1.13) and torchvision; run with
/usr/bin/python3 from the source folder after a build:

  bench/peer_outputs.py --octet build/tools/octet --size 250 --bench
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
import torch
import torchvision
from torchvision.models.detection.backbone_utils import resnet_fpn_backbone

NAMES = ["p2", "p3", "p4", "p5", "pool"]


class Outputs(torch.nn.Module):
    """The backbone's OrderedDict of feature maps as a tuple: ONNX's outputs, in order."""

    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def forward(self, x):
        return tuple(self.backbone(x).values())


def backbone(seed):
    torch.manual_seed(seed)
    model = resnet_fpn_backbone(backbone_name="resnet18", weights=None, trainable_layers=5)
    for bn in (m for m in model.modules() if isinstance(m, torchvision.ops.FrozenBatchNorm2d)):
        bn.running_mean.uniform_(-0.3, 0.3)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
    return Outputs(model).eval()


def sqnr_db(reference, value):
    reference, value = np.asarray(reference, np.float64), np.asarray(value, np.float64)
    return 10 * np.log10((reference ** 2).sum() / ((reference - value) ** 2).sum())


def torch_ao(model, calibration, test):
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "onednn"
    start = time.time()
    prepared = prepare_fx(model, get_default_qconfig_mapping("onednn"), example_inputs=(calibration[:1],))
    with torch.no_grad():
        for first in range(0, len(calibration), 8):
            prepared(calibration[first:first + 8])
    quantized = convert_fx(prepared)
    seconds = time.time() - start
    with torch.no_grad():
        return [o.numpy() for o in quantized(test)], seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--octet", default="build/tools/octet")
    parser.add_argument("--size", type=int, default=256, help="input side (250: resizes by no whole factor)")
    parser.add_argument("--calib", type=int, default=32)
    parser.add_argument("--test", type=int, default=8)
    parser.add_argument("--bench", action="store_true", help="also time octet against ONNX Runtime and LibTorch")
    a = parser.parse_args()
    shape = (3, a.size, a.size)
    model = backbone(0)
    inputs = np.random.default_rng(0).normal(size=(a.calib + a.test, *shape)).astype(np.float32)
    calibration, test = torch.from_numpy(inputs[:a.calib]), torch.from_numpy(inputs[a.calib:])
    with torch.no_grad():
        floats = [o.numpy() for o in model(test)]
    with tempfile.TemporaryDirectory(prefix="peer_outputs_") as folder:
        path = lambda name: os.path.join(folder, name)  # noqa: E731
        torch.onnx.export(model, torch.zeros(1, *shape), path("fpn.onnx"), opset_version=13, input_names=["image"],
                          output_names=NAMES, dynamic_axes={"image": {0: "n"}, **{k: {0: "n"} for k in NAMES}})
        np.save(path("calibration.npy"), inputs[:a.calib])
        np.save(path("test.npy"), inputs[a.calib:])
        run = lambda *args: subprocess.run([a.octet, *args], capture_output=True, text=True, check=True)  # noqa
        run("import", path("fpn.onnx"), "-o", path("fpn.octet"))
        start = time.time()
        run("quantize", "--checkpoint", path("fpn.octet"), "--calib-data", path("calibration.npy"), "-o",
            path("fpn.int8"))
        octet_seconds = time.time() - start
        report = json.loads(run("eval", "--checkpoint", path("fpn.octet"), "--quantized", path("fpn.int8"),
                                "--eval-data", path("test.npy"), "--json", "-").stdout)
        octet_db = [layer["sqnr_db"] for layer in report["layers"] if layer["op"] == "output"]
        ao, ao_seconds = torch_ao(model, calibration, test)
        print(f"ResNet-18 FPN, {a.size} x {a.size}, random weights; {a.calib} calibration and {a.test} test inputs")
        print(f"{'output':8} {'shape':>16} {'octet int8 dB':>14} {'torch.ao dB':>12}")
        for name, f, ours, theirs in zip(NAMES, floats, octet_db, ao):
            print(f"{name:8} {str(f.shape[1:]):>16} {ours:14.2f} {sqnr_db(f, theirs):12.2f}")
        print(f"quantize seconds: octet {octet_seconds:.1f}, torch.ao {ao_seconds:.1f}")
        if a.bench:
            env = dict(os.environ, OMP_WAIT_POLICY="passive")
            result = subprocess.run([a.octet, "bench", "infer", "--checkpoint", path("fpn.octet"), "--quantized",
                                     path("fpn.int8"), "--backend", "cpu", "--batch", "1,4", "--onnx", path("fpn.onnx"),
                                     "--iterations", "20", "--warmup", "3"], capture_output=True, text=True, env=env,
                                    check=True)
            print(result.stdout)


if __name__ == "__main__":
    main()
