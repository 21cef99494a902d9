"""The imported models that tools/gpu_check.sh times on a GPU (stage
`imported`), made here, where octet has the ONNX library (the GPU machine's
pip environment has none for C++), and packed into .gpu/models with xz:

- mv2_cifar, convnext_cifar: models/zoo/mobilenet_v2_cifar10.onnx and
  convnext_cifar10.onnx (trained), quantized on CIFAR-10 (JPEG copy) with the
  defaults (NAME.default.int8.octet: unsigned and 16-bit activations, which
  only cuda-imma reads; their CPU and GPU logits are compared over the whole
  test set there) and with --wide-bits 8 (NAME.int8.octet, which cuda-dp4a
  reads too: timed);
- resnet50, mobilenet_v2, convnext_tiny: torchvision's at 224x224, random
  weights, quantized
  with --method max --weight-rounding nearest on 16 random images. Speed does
  not depend on the weights, so each tensor repeats one random block of 4096
  values (and batch norm is the identity, so folding keeps the repetition):
  ResNet-50's 100 MB of float weights pack into a few hundred KB, within the
  64 MiB a device call carries.

    PYTHONPATH=build/python /usr/bin/python3 python/tools/gpu_models.py \\
        --octet build/tools/octet --data .data/cifar-10-batches-bin

Needs /usr/bin/python3's torch, torchvision and numpy."""

import argparse
import math
import pathlib
import subprocess
import tempfile

import numpy as np
import torch
import torchvision

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
BLOCK = 4096


def repeating_weights(model, seed):
    block = torch.from_numpy(np.random.default_rng(seed).normal(size=BLOCK).astype(np.float32))
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)):
                fan_in = m.weight[0].numel()
                n = m.weight.numel()
                m.weight.copy_((block.repeat(n // BLOCK + 1)[:n] * math.sqrt(2.0 / fan_in)).view_as(m.weight))
                if m.bias is not None:
                    m.bias.zero_()
            elif isinstance(m, torch.nn.BatchNorm2d):
                m.weight.fill_(1), m.bias.zero_(), m.running_mean.zero_(), m.running_var.fill_(1)


def run(command):
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--octet", default=str(SOURCE_DIR / "build" / "tools" / "octet"))
    p.add_argument("--data", default=str(SOURCE_DIR / ".data" / "cifar-10-batches-bin"))
    p.add_argument("--out", default=str(SOURCE_DIR / ".gpu" / "models"))
    a = p.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        files = []
        trained = [("mv2_cifar", "mobilenet_v2_cifar10.onnx"), ("convnext_cifar", "convnext_cifar10.onnx")]
        for name, onnx_file in trained:
            run([a.octet, "import", str(SOURCE_DIR / "models/zoo" / onnx_file), "--dataset", "cifar10",
                 "-o", str(tmp / f"{name}.octet")])
            run([a.octet, "quantize", "--checkpoint", str(tmp / f"{name}.octet"), "--data", a.data,
                 "-o", str(tmp / f"{name}.default.int8.octet")])
            # cuda-dp4a, timed beside cuda-imma, reads 8-bit activations only.
            run([a.octet, "quantize", "--checkpoint", str(tmp / f"{name}.octet"), "--data", a.data,
                 "--wide-bits", "8", "-o", str(tmp / f"{name}.int8.octet")])
            files += [f"{name}.octet", f"{name}.default.int8.octet", f"{name}.int8.octet"]
        calibration = tmp / "calibration.npy"
        np.save(calibration, np.random.default_rng(5).normal(size=(16, 3, 224, 224)).astype(np.float32))
        for seed, name in enumerate(["resnet50", "mobilenet_v2", "convnext_tiny"]):
            model = getattr(torchvision.models, name)().eval()
            repeating_weights(model, 200 + seed)
            onnx_path = tmp / f"{name}.onnx"
            torch.onnx.export(model, torch.zeros(1, 3, 224, 224), str(onnx_path), opset_version=13,
                              input_names=["input"], output_names=["logits"],
                              dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
            run([a.octet, "import", str(onnx_path), "-o", str(tmp / f"{name}.octet")])
            run([a.octet, "quantize", "--checkpoint", str(tmp / f"{name}.octet"), "--calib-data", str(calibration),
                 "--method", "max", "--weight-rounding", "nearest", "--activations", "signed", "--wide-bits", "8",
                 "-o", str(tmp / f"{name}.int8.octet")])
            files += [f"{name}.octet", f"{name}.int8.octet"]
        run(["tar", "cJf", str(out / "models.tar.xz"), "-C", str(tmp)] + files)
    print(f"{out / 'models.tar.xz'}: {(out / 'models.tar.xz').stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
