#!/usr/bin/python3
"""Detection models of several outputs, int8 against float: octet and torch.ao on the same weights.

--model fpn: torchvision's ResNet-18 FPN backbone (resnet_fpn_backbone: P2-P5 and the pool level, 256 channels each);
retinanet: torchvision's RetinaNet ResNet-50 FPN backbone and head (cls_logits and bbox_regression: each level's
anchors' rows, concatenated); ssdlite: SSDlite320 MobileNetV3-large's backbone and head (boxes and scores);
yolov5s: YOLOv5s as ultralytics exports it (bench/yolov5s.py: output0, its levels' rows decoded to boxes in pixels and
scores); yolov8n: YOLOv8n as ultralytics exports it (bench/yolov8n.py: output0 [4 + 80, positions], DFL boxes in pixels
and class sigmoids); yolov8n-seg: YOLOv8n-seg (its mask coefficients after the classes in output0 [4 + 80 + 32,
positions], the prototypes output1); yolov8n-pose: YOLOv8n-pose (one class, 17 keypoints decoded to pixels and
visibility sigmoids after it: [4 + 1 + 51, positions]). Random weights (no detection weights are on the build
machine): batch-norm statistics randomised, a torchvision head's convs Kaiming-initialised (torchvision's std 0.01
leaves untrained heads' activations vanishing), YOLO's with their own init and Detect's prior biases. Exported to
ONNX, then:

  octet: import, quantize (--calib-data: the first --calib inputs; the default method), predict --outputs on the
         next --test inputs: each output's SQNR against PyTorch's float;
  torch.ao: FX graph mode post-training static quantization (onednn's default qconfig, the same inputs);
  with --bench: octet bench infer against ONNX Runtime (fp32, and int8 on octet's export) and LibTorch.

Inputs are normal noise (no images are needed to compare int8 with float). An odd --size (250) makes the FPN's
top-down resizes no whole factor (32 -> 63 pixels). Needs the Debian torch (1.13) and torchvision; run with
/usr/bin/python3 from the source folder after a build:

  bench/peer_outputs.py --octet build/tools/octet --size 250 --bench
  bench/peer_outputs.py --octet build/tools/octet --model retinanet --size 320 --bench
  bench/peer_outputs.py --octet build/tools/octet --model yolov5s --size 640 --bench
  bench/peer_outputs.py --octet build/tools/octet --model yolov8n --size 640 --bench
  bench/peer_outputs.py --octet build/tools/octet --model yolov8n-seg --size 640 --bench
  bench/peer_outputs.py --octet build/tools/octet --model yolov8n-pose --size 640 --bench
"""

import argparse
import copy
import json
import os
import subprocess
import tempfile
import time

import numpy as np
import torch
import torchvision
from torchvision.models.detection.backbone_utils import resnet_fpn_backbone

import yolov5s
import yolov8n

class Outputs(torch.nn.Module):
    """A backbone's OrderedDict of feature maps (and a head's dict of rows) as a tuple: ONNX's outputs, in order."""

    def __init__(self, backbone, head=None):
        super().__init__()
        self.backbone, self.head = backbone, head

    def forward(self, x):
        features = tuple(self.backbone(x).values())
        return features if self.head is None else tuple(self.head(list(features)).values())


def randomised(model):
    for bn in (m for m in model.modules() if isinstance(m, (torch.nn.BatchNorm2d, torchvision.ops.FrozenBatchNorm2d))):
        bn.running_mean.uniform_(-0.3, 0.3)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.data.uniform_(0.5, 1.5)
    for conv in (m for m in (getattr(model, "head", None) or torch.nn.Module()).modules()
                 if isinstance(m, torch.nn.Conv2d)):
        torch.nn.init.kaiming_normal_(conv.weight)
    return model.eval()


def model_and_names(name, seed):
    torch.manual_seed(seed)
    if name == "fpn":
        backbone = resnet_fpn_backbone(backbone_name="resnet18", weights=None, trainable_layers=5)
        return randomised(Outputs(backbone)), ["p2", "p3", "p4", "p5", "pool"]
    if name == "yolov5s":
        return randomised(yolov5s.Yolov5s()), ["output0"]
    if name == "yolov8n":
        return randomised(yolov8n.Yolov8n()), ["output0"]
    if name == "yolov8n-seg":
        return randomised(yolov8n.Yolov8nSeg()), ["output0", "output1"]
    if name == "yolov8n-pose":
        return randomised(yolov8n.Yolov8nPose()), ["output0"]
    detection = torchvision.models.detection
    if name == "retinanet":
        model = detection.retinanet_resnet50_fpn(weights=None, weights_backbone=None)
        return randomised(Outputs(model.backbone, model.head)), ["cls_logits", "bbox_regression"]
    model = detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
    return randomised(Outputs(model.backbone, model.head)), ["bbox_regression", "cls_logits"]


def sqnr_db(reference, value):
    reference, value = np.asarray(reference, np.float64), np.asarray(value, np.float64)
    return 10 * np.log10((reference ** 2).sum() / ((reference - value) ** 2).sum())


def rows(y, k):
    """view(N, -1, K, H, W).permute(0, 3, 4, 1, 2).reshape(N, -1, K), the same values, in a form FX traces: FX cannot
    unpack a shape (torchvision's heads' `N, _, H, W = y.shape`), so torch.ao cannot quantize them as they are."""
    return y.permute(0, 2, 3, 1).reshape(y.shape[0], -1, k)


def fx_traceable(model):
    """A copy of `model` whose detection heads give their rows by rows(); YOLOv5's, its head convs' outputs (decoded
    after torch.ao's int8 convs, in float, by finished())."""
    from torchvision.models.detection import retinanet, ssd
    model = copy.deepcopy(model)
    if isinstance(model, (yolov5s.Yolov5s, yolov8n.Yolov8n)):
        model.decode = False
        return model
    for head in model.modules():
        if isinstance(head, retinanet.RetinaNetClassificationHead):
            head.forward = lambda x, h=head: torch.cat([rows(h.cls_logits(h.conv(f)), h.num_classes) for f in x], 1)
        elif isinstance(head, retinanet.RetinaNetRegressionHead):
            head.forward = lambda x, h=head: torch.cat([rows(h.bbox_reg(h.conv(f)), 4) for f in x], 1)
        elif isinstance(head, ssd.SSDScoringHead):
            head.forward = lambda x, h=head: torch.cat(
                [rows(h._get_result_from_module_list(f, i), h.num_columns) for i, f in enumerate(x)], 1)
    return model


def finished(model, outputs):
    """The traceable copy's outputs as `model` returns them: YOLO's head convs decoded, in float."""
    if isinstance(model, yolov8n.Yolov8nSeg):
        return list(yolov8n.segment(outputs, model.dfl, model.nc))
    if isinstance(model, yolov8n.Yolov8nPose):
        return [yolov8n.keypoints(outputs, model.dfl, model.nc, model.kpt_shape)]
    if isinstance(model, yolov8n.Yolov8n):
        return [yolov8n.decode(outputs, model.dfl, model.nc)]
    if not isinstance(model, yolov5s.Yolov5s):
        return list(outputs)
    return [torch.cat([yolov5s.decode(i, y, model.nc) for i, y in enumerate(outputs)], 1)]


def torch_ao(model, calibration, test):
    from torch.ao.quantization import get_default_qconfig, get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "onednn"
    traceable = fx_traceable(model)
    with torch.no_grad():
        reference = model(test[:1])
        assert all(torch.equal(a, b) for a, b in zip(finished(model, traceable(test[:1])),
                                                     reference if isinstance(reference, tuple) else [reference]))
    start = time.time()
    # torch.ao refuses per-channel weights for ConvTranspose2d ("not supported yet"): per-tensor for those.
    mapping = get_default_qconfig_mapping("onednn").set_object_type(torch.nn.ConvTranspose2d,
                                                                    get_default_qconfig("qnnpack"))
    prepared = prepare_fx(traceable, mapping, example_inputs=(calibration[:1],))
    with torch.no_grad():
        for first in range(0, len(calibration), 8):
            prepared(calibration[first:first + 8])
    quantized = convert_fx(prepared)
    seconds = time.time() - start
    with torch.no_grad():
        return [o.numpy() for o in finished(model, quantized(test))], seconds


YOLO_PARTS = {"centres (xy)": (..., slice(0, 2)), "sizes (wh)": (..., slice(2, 4)), "objectness": (..., slice(4, 5)),
              "classes": (..., slice(5, None))}
YOLOV8_PARTS = {"centres (xy)": (slice(None), slice(0, 2)), "sizes (wh)": (slice(None), slice(2, 4)),
                "classes": (slice(None), slice(4, None))}
YOLOV8_SEG_PARTS = {**YOLOV8_PARTS, "classes": (slice(None), slice(4, 84)), "masks": (slice(None), slice(84, None))}
YOLOV8_POSE_PARTS = {**YOLOV8_PARTS, "classes": (slice(None), slice(4, 5)),
                     "keypoint x": (slice(None), slice(5, None, 3)), "keypoint y": (slice(None), slice(6, None, 3)),
                     "visibility": (slice(None), slice(7, None, 3))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--octet", default="build/tools/octet")
    parser.add_argument("--model", default="fpn",
                        choices=["fpn", "retinanet", "ssdlite", "yolov5s", "yolov8n", "yolov8n-seg", "yolov8n-pose"])
    parser.add_argument("--size", type=int, default=256, help="input side (250: resizes by no whole factor)")
    parser.add_argument("--calib", type=int, default=32)
    parser.add_argument("--test", type=int, default=8)
    parser.add_argument("--bench", action="store_true", help="also time octet against ONNX Runtime and LibTorch")
    a = parser.parse_args()
    shape = (3, a.size, a.size)
    model, names = model_and_names(a.model, 0)
    inputs = np.random.default_rng(0).normal(size=(a.calib + a.test, *shape)).astype(np.float32)
    calibration, test = torch.from_numpy(inputs[:a.calib]), torch.from_numpy(inputs[a.calib:])
    with torch.no_grad():
        floats = model(test)
        floats = [o.numpy() for o in (floats if isinstance(floats, tuple) else [floats])]
    with tempfile.TemporaryDirectory(prefix="peer_outputs_") as folder:
        path = lambda name: os.path.join(folder, name)  # noqa: E731
        torch.onnx.export(model, torch.zeros(1, *shape), path("model.onnx"), opset_version=13, input_names=["image"],
                          output_names=names, dynamic_axes={"image": {0: "n"}, **{k: {0: "n"} for k in names}})
        np.save(path("calibration.npy"), inputs[:a.calib])
        np.save(path("test.npy"), inputs[a.calib:])
        run = lambda *args: subprocess.run([a.octet, *args], capture_output=True, text=True, check=True)  # noqa
        run("import", path("model.onnx"), "-o", path("model.octet"))
        start = time.time()
        run("quantize", "--checkpoint", path("model.octet"), "--calib-data", path("calibration.npy"), "-o",
            path("model.int8"))
        octet_seconds = time.time() - start
        written = json.loads(run("predict", "--quantized", path("model.int8"), "--eval-data", path("test.npy"),
                                 "--outputs", path("outputs"), "--json", "-").stdout)["outputs"]
        ours = [np.load(w["int8"]) for w in written]
        ao, ao_seconds = torch_ao(model, calibration, test)
        print(f"{a.model}, {a.size} x {a.size}, random weights; {a.calib} calibration and {a.test} test inputs")
        print(f"{'output':16} {'shape':>16} {'octet int8 dB':>14} {'torch.ao dB':>12}")
        for name, f, mine, theirs in zip(names, floats, ours, ao):
            print(f"{name:16} {str(f.shape[1:]):>16} {sqnr_db(f, mine):14.2f} {sqnr_db(f, theirs):12.2f}")
            # output0's decoded parts apart: the cells' pixel offsets dominate the whole. YOLOv5's on the last axis,
            # YOLOv8's on axis 1.
            parts = {"yolov5s": YOLO_PARTS, "yolov8n": YOLOV8_PARTS, "yolov8n-seg": YOLOV8_SEG_PARTS,
                     "yolov8n-pose": YOLOV8_POSE_PARTS}
            for part, at in (parts.get(a.model, {}) if name == "output0" else {}).items():
                print(f"  {part:14} {'':>16} {sqnr_db(f[at], mine[at]):14.2f} {sqnr_db(f[at], theirs[at]):12.2f}")
        print(f"quantize seconds: octet {octet_seconds:.1f}, torch.ao {ao_seconds:.1f}")
        if a.bench:
            env = dict(os.environ, OMP_WAIT_POLICY="passive")
            result = subprocess.run([a.octet, "bench", "infer", "--checkpoint", path("model.octet"), "--quantized",
                                     path("model.int8"), "--backend", "cpu", "--batch", "1,4", "--onnx",
                                     path("model.onnx"), "--iterations", "20", "--warmup", "3"], capture_output=True,
                                    text=True, env=env, check=True)
            print(result.stdout)


if __name__ == "__main__":
    main()
