"""The torchvision CNNs of issue 40 through octet: each architecture, with
random weights and batch-norm statistics (GoogLeNet and Inception-v3 with
transform_input, as their pretrained weights set it; NAME_gn: the ResNet NAME
with GroupNorm(32) in place of each batch norm, as ResNet-50-GN of Wu and He's
GroupNorm paper, its affine random too), exported by torch.onnx
(opset 13, free batch size; --opset 18 or more: at 17, then written in the
forms of PyTorch's default exporter at that opset, python/tests/dynamo_forms.py),
imported by `octet import` without a dataset, its float logits compared
with ONNX Runtime fp32 on 64 random 224x224 inputs (max
|difference| over the largest logit; goal 1e-4), then quantized on 16 of
them (`--method max --weight-rounding nearest`) and run in int8 on the CPU
(top-1 agreement and logit cosine with float on those 16: random weights
and inputs, so these say it runs, not how well).

    PYTHONPATH=build-core/python OCTET_BIN=build-core/tools/octet \\
        /usr/bin/python3 python/tools/torchvision_zoo.py [--out DIR] [--opset N] [NAME ...]

Needs /usr/bin/python3's torch and torchvision, and ONNX Runtime in .ort/
(tools/setup.sh test installs it)."""

import argparse
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import torch
import torchvision

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SOURCE_DIR / "python" / "tests"))
import octet  # noqa: E402
import ort_peer  # noqa: E402
from dynamo_forms import as_dynamo_writes  # noqa: E402

MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1", "shufflenet_v2_x1_0",
          "googlenet", "densenet121", "efficientnet_b0", "regnet_x_400mf", "vgg11_bn", "alexnet", "inception_v3",
          "mnasnet1_0", "resnext50_32x4d", "mobilenet_v3_large", "regnet_y_400mf", "shufflenet_v2_x0_5",
          "efficientnet_v2_s", "convnext_tiny"]


def export(name, seed, path, opset):
    torch.manual_seed(seed)
    # transform_input: on, as with their pretrained weights (weights=None turns it off)
    inception = name in ("googlenet", "inception_v3")
    options = {"aux_logits": False, "init_weights": True, "transform_input": True} if inception else {}
    if name.endswith("_gn"):
        options["norm_layer"] = lambda channels: torch.nn.GroupNorm(32, channels)
    model = getattr(torchvision.models, name.removesuffix("_gn"))(weights=None, **options).eval()
    for m in model.modules():  # batch-norm statistics and GroupNorm affines that are not the identity
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 2.0)
        if isinstance(m, torch.nn.GroupNorm):
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)
    torch.onnx.export(model, torch.zeros(1, 3, 224, 224), str(path), opset_version=min(opset, 17),
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    if opset > 17:
        import onnx

        path.write_bytes(as_dynamo_writes(onnx.load(str(path)), opset).SerializeToString())


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(result.stderr.strip())
    return result.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", default=MODELS, help="torchvision architectures (default: these 20)")
    p.add_argument("--out", default="/tmp/octet_torchvision_zoo", help="folder for the .onnx and octet files")
    p.add_argument("--opset", type=int, default=13, help="the files' opset (default 13; 18 to 27: dynamo's forms)")
    a = p.parse_args()
    octet_bin = os.environ.get("OCTET_BIN", str(SOURCE_DIR / "build-core" / "tools" / "octet"))
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    inputs = np.random.default_rng(5).normal(size=(64, 3, 224, 224)).astype(np.float32)
    np.save(out / "calibration.npy", inputs[:16])
    print(f"{'model':20s} {'octet vs ORT fp32':>18s} {'quantize':>9s} {'int8 agreement':>15s} {'cosine':>7s}")
    for seed, name in enumerate(a.names):
        onnx_path, checkpoint, int8 = out / f"{name}.onnx", out / f"{name}.octet", out / f"{name}.int8.octet"
        export(name, 100 + seed, onnx_path, a.opset)
        try:
            run([octet_bin, "import", str(onnx_path), "-o", str(checkpoint)])
        except RuntimeError as e:
            print(f"{name:20s} refused: {e}")
            continue
        float_model = octet.load_checkpoint(str(checkpoint))
        got = float_model.predict(inputs)
        expected = ort_peer.run(str(onnx_path), [inputs])[0]
        ratio = np.abs(got - expected).max() / np.abs(expected).max()
        start = time.time()
        run([octet_bin, "quantize", "--checkpoint", str(checkpoint), "--calib-data", str(out / "calibration.npy"),
             "--method", "max", "--weight-rounding", "nearest", "-o", str(int8)])
        seconds = time.time() - start
        # float64: random weights can give logits whose squares overflow float32 (inception_v3's do)
        int8_logits = octet.load_quantized(str(int8)).predict(inputs[:16], dequantize=True).astype(np.float64)
        reference = got[:16].astype(np.float64)
        agreement = np.mean(int8_logits.argmax(1) == reference.argmax(1))
        cosine = np.sum(int8_logits * reference) / np.sqrt(np.sum(int8_logits ** 2) * np.sum(reference ** 2))
        print(f"{name:20s} {ratio:18.1e} {seconds:8.1f}s {agreement:15.3f} {cosine:7.4f}", flush=True)


if __name__ == "__main__":
    main()
