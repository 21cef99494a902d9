"""Caffe's AlexNet as the ONNX Model Zoo's bvlc_alexnet has it (227x227, grouped convs, an LRN
after each of the first two ReLUs), with random weights (times 3: activations of tens, where
AlexNet's LRN alpha weighs the squares), through octet: exported by torch.onnx (opset 13, free
batch size, each LRN one node), imported by `octet import`, its float logits compared with ONNX
Runtime fp32 and PyTorch on 32 random inputs (max |difference| over the largest logit), quantized
on 16 of them (`--method max --weight-rounding nearest`) and run in int8 on the CPU (top-1
agreement and logit cosine with float). Then time it beside ONNX Runtime:

    PYTHONPATH=build/python OCTET_BIN=build/tools/octet /usr/bin/python3 python/tools/caffe_alexnet.py
    build/tools/octet bench infer --checkpoint /tmp/octet_alexnet/alexnet.octet \\
        --quantized /tmp/octet_alexnet/alexnet.int8.octet --onnx /tmp/octet_alexnet/alexnet.onnx --batch 1,16"""

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


class BvlcAlexNet(nn.Module):
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

        x = pool(Lrn.apply(torch.relu(self.c1(x)), 5, 1e-4, 0.75, 1.0))
        x = pool(Lrn.apply(torch.relu(self.c2(x)), 5, 1e-4, 0.75, 1.0))
        x = pool(torch.relu(self.c5(torch.relu(self.c4(torch.relu(self.c3(x)))))))
        return self.f8(torch.relu(self.f7(torch.relu(self.f6(x.flatten(1))))))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="/tmp/octet_alexnet", help="folder for the .onnx and octet files")
    out = pathlib.Path(p.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    octet_bin = os.environ.get("OCTET_BIN", str(SOURCE_DIR / "build" / "tools" / "octet"))
    torch.manual_seed(7)
    model = BvlcAlexNet().eval()
    for parameter in model.parameters():
        parameter.data *= 3
    onnx_path, checkpoint, int8 = out / "alexnet.onnx", out / "alexnet.octet", out / "alexnet.int8.octet"
    torch.onnx.export(model, torch.zeros(1, 3, 227, 227), str(onnx_path), opset_version=13, input_names=["data"],
                      output_names=["prob"], dynamic_axes={"data": {0: "n"}, "prob": {0: "n"}})
    print(run([octet_bin, "import", str(onnx_path), "-o", str(checkpoint)]).strip())
    inputs = np.random.default_rng(5).normal(size=(32, 3, 227, 227)).astype(np.float32)
    np.save(out / "calibration.npy", inputs[:16])
    got = octet.load_checkpoint(str(checkpoint)).predict(inputs)
    ort = ort_peer.run(str(onnx_path), [inputs])[0]
    with torch.no_grad():
        torch_logits = model(torch.from_numpy(inputs)).numpy()
    print(f"float: within {np.abs(got - ort).max() / np.abs(ort).max():.1e} of ORT fp32, "
          f"{np.abs(got - torch_logits).max() / np.abs(torch_logits).max():.1e} of PyTorch")
    run([octet_bin, "quantize", "--checkpoint", str(checkpoint), "--calib-data", str(out / "calibration.npy"),
         "--method", "max", "--weight-rounding", "nearest", "-o", str(int8)])
    int8_logits = octet.load_quantized(str(int8)).predict(inputs, dequantize=True).astype(np.float64)
    reference = got.astype(np.float64)
    cosine = np.sum(int8_logits * reference) / np.sqrt(np.sum(int8_logits ** 2) * np.sum(reference ** 2))
    print(f"int8: top-1 agreement {np.mean(int8_logits.argmax(1) == reference.argmax(1)):.3f}, cosine {cosine:.4f}")


if __name__ == "__main__":
    main()
