"""Detection heads whose outputs rearrange their convs' values: torchvision's RetinaNet head (each level's A x K
channels viewed as [N, A, K, H, W], permuted to [N, H, W, A, K], rows of K, the levels concatenated), an SSD-style
head (channels last, then rows), YOLO's raw outputs ([N, A, H, W, K] per level), YOLOv5's Detect in inference mode
(those decoded to boxes in pixels and scores) and torchvision's SSDlite as it is.
octet keeps the convs as its outputs (their int32 accumulators) and returns the rows PyTorch does: float equal to
PyTorch, int8 following float, `octet predict --outputs` and the Python module alike, the int8 export giving ONNX
Runtime the same named outputs; a value computed from the rows, and labels, are refused by name."""

import json
import subprocess

import numpy as np
import octet
import ort_peer
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from torchscript_onnx import torchscript_export  # noqa: E402
from unlabelled_import import imported, refused, varied_inputs  # noqa: E402

nn = torch.nn
IMAGE = (3, 32, 32)


def trunk():
    """Features at 1/2, 1/4 and 1/8 of the input."""
    return nn.ModuleList([nn.Sequential(nn.Conv2d(c, 16, 3, 2, 1), nn.ReLU()) for c in (3, 16, 16)])


def levels(stages, x):
    features = []
    for stage in stages:
        x = stage(x)
        features.append(x)
    return features


class Retina(nn.Module):
    def __init__(self):
        super().__init__()
        from torchvision.models.detection.retinanet import RetinaNetHead
        self.trunk, self.head = trunk(), RetinaNetHead(16, 9, 5)
        for conv in (m for m in self.head.modules() if isinstance(m, nn.Conv2d)):
            nn.init.kaiming_normal_(conv.weight)  # torchvision's std 0.01 vanishes through 4 untrained layers

    def forward(self, x):
        out = self.head(levels(self.trunk, x))
        return out["cls_logits"], out["bbox_regression"]


class SsdStyle(nn.Module):
    """x.permute(0, 2, 3, 1).contiguous().view(N, -1, 4) per level, concatenated: many SSD ports' boxes."""

    def __init__(self):
        super().__init__()
        self.trunk = trunk()
        self.boxes = nn.ModuleList([nn.Conv2d(16, a * 4, 3, 1, 1) for a in (4, 6, 6)])

    def forward(self, x):
        rows = [b(f).permute(0, 2, 3, 1).contiguous().view(x.shape[0], -1, 4)
                for f, b in zip(levels(self.trunk, x), self.boxes)]
        return torch.cat(rows, -2)


class YoloRaw(nn.Module):
    """YOLOv5's Detect in training mode: each level [N, 3, H, W, 5 + classes]."""

    def __init__(self):
        super().__init__()
        self.trunk = trunk()
        self.m = nn.ModuleList([nn.Conv2d(16, 3 * 7, 1) for _ in range(3)])

    def forward(self, x):
        out = []
        for f, m in zip(levels(self.trunk, x)[1:], self.m[1:]):
            y = m(f)
            n, _, h, w = y.shape
            out.append(y.view(n, 3, 7, h, w).permute(0, 1, 3, 4, 2).contiguous())
        return tuple(out)


class Yolov5(nn.Module):
    """YOLOv5's Detect (ultralytics/yolov5 v7.0 models/yolo.py) in inference mode, as `export.py` runs it: each
    level's [N, 3, H, W, 5 + classes] decoded (sigmoid, grid, stride, anchors) and the levels' rows concatenated."""

    def __init__(self, grid_offset=-0.5):
        super().__init__()
        self.trunk = trunk()
        self.no, self.na, self.grid_offset = 7, 3, grid_offset
        self.m = nn.ModuleList([nn.Conv2d(16, 3 * 7, 1) for _ in range(3)])
        self.stride = [2.0, 4.0, 8.0]
        anchors = torch.tensor([[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326]],
                               dtype=torch.float32).view(3, 3, 2)
        self.grids = [self.grid(anchors[i], IMAGE[1] // 2 ** (i + 1)) for i in range(3)]  # constants, as Detect's

    def grid(self, anchors, n):
        yv, xv = torch.meshgrid(torch.arange(float(n)), torch.arange(float(n)), indexing="ij")
        shape = 1, self.na, n, n, 2
        grid = torch.stack((xv, yv), 2).expand(shape) + self.grid_offset
        return grid, anchors.view(1, self.na, 1, 1, 2).expand(shape)

    def forward(self, x):
        z = []
        for i, (f, m) in enumerate(zip(levels(self.trunk, x), self.m)):
            y = m(f)
            bs, _, ny, nx = y.shape
            y = y.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            grid, anchor_grid = self.grids[i]
            xy, wh, conf = y.sigmoid().split((2, 2, self.no - 4), 4)
            xy = (xy * 2 + grid) * self.stride[i]
            wh = (wh * 2) ** 2 * anchor_grid
            z.append(torch.cat((xy, wh, conf), 4).view(bs, self.na * nx * ny, self.no))
        return torch.cat(z, 1)


class Yolov7(Yolov5):
    """YOLOv7's IDetect (WongKinYiu/yolov7 models/yolo.py) as its export writes the same decode: xy * (2 stride) +
    stride (grid - 0.5), wh ^ 2 * (4 anchor_grid); its grid [1, 1, H, W, 2], its anchors [1, 3, 1, 1, 2]."""

    def forward(self, x):
        z = []
        for i, (f, m) in enumerate(zip(levels(self.trunk, x), self.m)):
            y = m(f)
            bs, _, ny, nx = y.shape
            y = y.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous().sigmoid()
            grid, anchor_grid = self.grids[i]
            xy, wh, conf = y.split((2, 2, self.no - 4), 4)
            cells = grid[:1] - self.grid_offset  # YOLOv7's grid: each cell's (x, y)
            xy = xy * (2.0 * self.stride[i]) + self.stride[i] * (cells - 0.5)
            wh = wh ** 2 * (4 * anchor_grid[:, :, :1, :1])
            z.append(torch.cat((xy, wh, conf), 4).view(bs, -1, self.no))
        return torch.cat(z, 1)


class Yolov8(nn.Module):
    """YOLOv8's (and YOLO11's) Detect (ultralytics nn/modules/head.py) in inference mode, as its static ONNX export
    runs it: each level's box conv (4 sides x 16 bins) and class conv concatenated and viewed as [N, C, HW], the
    levels concatenated, DFL (a softmax over each side's bins, their expectation by a fixed 1x1 conv) and dist2bbox
    with the cells' centres and strides as constants, the classes' sigmoids: [N, 4 + classes, positions]."""

    def __init__(self, classes=3, bins=16, anchor_offset=0.5, dynamic=False):
        super().__init__()
        self.trunk, self.classes, self.bins, self.dynamic = trunk(), classes, bins, dynamic
        self.cv2 = nn.ModuleList([nn.Conv2d(16, 4 * bins, 1) for _ in range(3)])
        self.cv3 = nn.ModuleList([nn.Conv2d(16, classes, 1) for _ in range(3)])
        self.dfl = nn.Conv2d(bins, 1, 1, bias=False).requires_grad_(False)
        self.dfl.weight.data[:] = torch.arange(bins, dtype=torch.float32).view(1, bins, 1, 1)
        centres, strides, self.positions = [], [], []  # Python's ints: constants, as a static export's shapes
        for i in range(3):  # make_anchors(feats, [2, 4, 8], 0.5)
            n, stride = IMAGE[1] // 2 ** (i + 1), 2.0 ** (i + 1)
            self.positions.append(n * n)
            yv, xv = torch.meshgrid(torch.arange(n) + anchor_offset, torch.arange(n) + anchor_offset, indexing="ij")
            centres.append(torch.stack((xv, yv), -1).view(-1, 2))
            strides.append(torch.full((n * n, 1), stride))
        self.anchors, self.strides = torch.cat(centres).transpose(0, 1), torch.cat(strides).transpose(0, 1)

    def forward(self, x):
        return self.detect(levels(self.trunk, x))

    def detect(self, features):
        no = 4 * self.bins + self.classes
        levels_ = [torch.cat((b(f), c(f)), 1) for f, b, c in zip(features, self.cv2, self.cv3)]
        x_cat = torch.cat([y.view(y.shape[0], no, -1) if self.dynamic else y.view(-1, no, p)
                           for y, p in zip(levels_, self.positions)], 2)
        box, cls = x_cat.split((4 * self.bins, self.classes), 1)
        positions = sum(self.positions)
        distances = self.dfl(box.view(-1, 4, self.bins, positions).transpose(2, 1).softmax(1)).view(-1, 4, positions)
        lt, rb = distances.split((2, 2), 1)
        x1y1, x2y2 = self.anchors.unsqueeze(0) - lt, self.anchors.unsqueeze(0) + rb
        boxes = torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * self.strides
        return torch.cat((boxes, cls.sigmoid()), 1)


class Yolov8Seg(Yolov8):
    """YOLOv8's Segment head: Detect's output0 with each level's mask coefficients (a conv's [N, masks, HW] view, the
    levels concatenated over the positions) concatenated after the classes, and the mask prototypes from the first
    level (Proto: a conv, a 2x2 ConvTranspose of stride 2, two convs, SiLU after each conv): output1."""

    def __init__(self, masks=4):
        super().__init__()
        self.cv4 = nn.ModuleList([nn.Conv2d(16, masks, 1) for _ in range(3)])
        self.proto = nn.Sequential(nn.Conv2d(16, 8, 3, 1, 1), nn.SiLU(), nn.ConvTranspose2d(8, 8, 2, 2),
                                   nn.Conv2d(8, 8, 3, 1, 1), nn.SiLU(), nn.Conv2d(8, masks, 1), nn.SiLU())

    def forward(self, x):
        features = levels(self.trunk, x)
        coefficients = torch.cat([m(f).view(-1, m.out_channels, p)
                                  for f, m, p in zip(features, self.cv4, self.positions)], 2)
        return torch.cat((self.detect(features), coefficients), 1), self.proto(features[0])


class Yolov8Pose(Yolov8):
    """YOLOv8's Pose head: each level's keypoint conv (K x 3: x, y, visibility) viewed as [N, 3 K, HW], the levels
    concatenated over the positions, decoded as ultralytics' kpts_decode exports it ((2 v + anchors - 0.5) x strides,
    the visibility's sigmoid) and concatenated after the class sigmoids: output0 [N, 4 + classes + 3 K, positions]."""

    def __init__(self, keypoints=5, cell_shift=0.5):
        super().__init__()
        self.keypoints, self.cell_shift = keypoints, cell_shift
        self.cv4 = nn.ModuleList([nn.Conv2d(16, 3 * keypoints, 1) for _ in range(3)])

    def forward(self, x):
        features, positions = levels(self.trunk, x), sum(self.positions)
        kpt = torch.cat([m(f).view(-1, 3 * self.keypoints, p) for f, m, p in zip(features, self.cv4, self.positions)],
                        -1)
        y = kpt.view(-1, self.keypoints, 3, positions)
        xy = (y[:, :, :2] * 2.0 + (self.anchors - self.cell_shift)) * self.strides
        keypoints = torch.cat((xy, y[:, :, 2:3].sigmoid()), 2).view(-1, 3 * self.keypoints, positions)
        return torch.cat((self.detect(features), keypoints), 1)


MODELS = {"retina": (Retina, ["cls_logits", "bbox_regression"]), "ssd": (SsdStyle, ["boxes"]),
          "yolo": (YoloRaw, ["p4", "p8"]), "yolov5": (Yolov5, ["output0"]), "yolov7": (Yolov7, ["output"]),
          "yolov8": (Yolov8, ["output0"]), "yolov8seg": (Yolov8Seg, ["output0", "output1"]),
          "yolov8pose": (Yolov8Pose, ["output0"])}


def export(model, path, names):
    torchscript_export(model.eval(), torch.zeros(1, *IMAGE), path, opset_version=13, input_names=["image"],
                       output_names=names, dynamic_axes={"image": {0: "n"}, **{k: {0: "n"} for k in names}})


@pytest.fixture(scope="module")
def images():
    return varied_inputs(56, 48, IMAGE)


@pytest.fixture(scope="module", params=sorted(MODELS))
def detector(request, tmp_path_factory, octet_bin, images):
    """(name, PyTorch model, folder): the model exported, imported, and quantized on 32 images (mse)."""
    name = request.param
    folder = tmp_path_factory.mktemp(name)
    torch.manual_seed(3)
    kind, names = MODELS[name]
    model = kind().eval()
    export(model, folder / "model.onnx", names)
    imported(octet_bin, folder / "model.onnx", folder / "model.octet")
    np.save(folder / "calibration.npy", images[:32])
    np.save(folder / "test.npy", images[32:])
    subprocess.run([octet_bin, "quantize", "--checkpoint", str(folder / "model.octet"), "--calib-data",
                    str(folder / "calibration.npy"), "--method", "mse", "-o", str(folder / "model.int8")],
                   capture_output=True, text=True, check=True)
    return name, model, folder


def as_tuple(outputs):
    return outputs if isinstance(outputs, tuple) else (outputs,)


def sqnr_db(reference, value):
    reference, value = np.asarray(reference, np.float64), np.asarray(value, np.float64)
    return 10 * np.log10((reference ** 2).sum() / ((reference - value) ** 2).sum())


def test_float_rows_are_pytorchs(detector, images):
    name, model, folder = detector
    checkpoint = octet.load_checkpoint(str(folder / "model.octet"))
    ours = as_tuple(checkpoint.predict(images))
    with torch.no_grad():
        expected = [t.numpy() for t in as_tuple(model(torch.from_numpy(images)))]
    assert [o["name"] for o in checkpoint.outputs] == MODELS[name][1]
    assert [o["shape"] for o in checkpoint.outputs] == [e.shape[1:] for e in expected]
    for got, want in zip(ours, expected):
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max(), np.abs(got - want).max()


def test_int8_rows_follow_float_and_predict_writes_them(detector, images, octet_bin, tmp_path):
    _, _, folder = detector
    floats = as_tuple(octet.load_checkpoint(str(folder / "model.octet")).predict(images[32:]))
    quantized = octet.load_quantized(str(folder / "model.int8"))
    int8 = as_tuple(quantized.predict(images[32:], dequantize=True))
    for f, q in zip(floats, int8):
        assert q.shape == f.shape and sqnr_db(f, q) >= 30, sqnr_db(f, q)
    report = json.loads(subprocess.run([octet_bin, "eval", "--checkpoint", str(folder / "model.octet"), "--quantized",
                                        str(folder / "model.int8"), "--eval-data", str(folder / "test.npy"), "--json",
                                        "-"], capture_output=True, text=True, check=True).stdout)
    rows = [layer for layer in report["layers"] if layer["op"] == "rows"]
    assert [r["name"] for r in rows] == [o["name"] for o in quantized.outputs]
    for r, f, q in zip(rows, floats, int8):  # each output's SQNR over all its convs' values
        assert abs(r["sqnr_db"] - sqnr_db(f, q)) < 0.01, (r, sqnr_db(f, q))
    result = subprocess.run([octet_bin, "predict", "--quantized", str(folder / "model.int8"), "--checkpoint",
                             str(folder / "model.octet"), "--eval-data", str(folder / "test.npy"), "--outputs",
                             str(tmp_path), "--json", "-"], capture_output=True, text=True, check=True)
    written = json.loads(result.stdout)["outputs"]
    assert [w["name"] for w in written] == [o["name"] for o in quantized.outputs]
    assert [w.get("decode") for w in written] == [o["decode"] for o in quantized.outputs]
    for w, f, q in zip(written, floats, int8):
        assert w["shape"] == list(f.shape)
        np.testing.assert_array_equal(np.load(w["int8"]), q)
        np.testing.assert_array_equal(np.load(w["float"]), f)


def test_the_int8_export_gives_onnx_runtime_the_same_named_rows(detector, images, octet_bin, tmp_path):
    name, _, folder = detector
    subprocess.run([octet_bin, "export", "--quantized", str(folder / "model.int8"), "--onnx",
                    str(tmp_path / "int8.onnx")], capture_output=True, text=True, check=True)
    assert [o.name for o in onnx.load(str(tmp_path / "int8.onnx")).graph.output] == MODELS[name][1]
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    ours = as_tuple(octet.load_quantized(str(folder / "model.int8")).predict(images[32:], dequantize=True))
    for got, theirs in zip(ours, ort_peer.run(str(tmp_path / "int8.onnx"), [images[32:]])):
        assert theirs.shape == got.shape and sqnr_db(got, theirs) >= 50, sqnr_db(got, theirs)


def test_bench_infer_times_the_rows_as_predict_returns_them(detector, octet_bin, tmp_path):
    """Arranging the rows (and YOLOv5's decode) is octet's work as much as ONNX Runtime's, whose runs include it: a
    row of its own times the engine with it, and that row is the one compared with ORT."""
    _, _, folder = detector
    result = subprocess.run([octet_bin, "bench", "infer", "--checkpoint", str(folder / "model.octet"), "--quantized",
                             str(folder / "model.int8"), "--backend", "cpu", "--batch", "2", "--iterations", "2",
                             "--warmup", "0", "--threads", "1", "--onnx", str(folder / "model.onnx"), "--json",
                             str(tmp_path / "bench.json")], capture_output=True, text=True, check=True)
    bench = json.loads((tmp_path / "bench.json").read_text())
    octet_rows = [r for r in bench["results"] if r["precision"] == "int8" and r["backend"].startswith("cpu")]
    assert [r["backend"] for r in octet_rows] == ["cpu", "cpu + outputs"], bench["results"]
    assert all(r["latency_ms"] > 0 for r in octet_rows), octet_rows
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    (speedup,) = bench["speedups"]
    assert speedup["cpu_int8_against_onnxruntime"] == "cpu + outputs", speedup
    against_ort = [line for line in result.stdout.splitlines()
                   if line.startswith("  CPU: int8") and "onnxruntime" in line]
    assert against_ort and all("(cpu + outputs)" in line for line in against_ort), result.stdout


def test_labels_and_class_predictions_are_refused(detector, octet_bin, tmp_path):
    _, _, folder = detector
    np.save(tmp_path / "labels.npy", np.zeros(16, dtype=np.int64))
    run = [octet_bin, "predict", "--quantized", str(folder / "model.int8"), "--eval-data", str(folder / "test.npy")]
    result = subprocess.run(run, capture_output=True, text=True)
    assert result.returncode == 1 and "a detection head's rows): --outputs FOLDER" in result.stderr
    result = subprocess.run([octet_bin, "eval", "--checkpoint", str(folder / "model.octet"), "--quantized",
                             str(folder / "model.int8"), "--eval-data", str(folder / "test.npy"), "--eval-labels",
                             str(tmp_path / "labels.npy")], capture_output=True, text=True)
    assert result.returncode == 1 and "labels score one output of classes" in result.stderr
    result = subprocess.run([octet_bin, "eval", "--checkpoint", str(folder / "model.octet"), "--eval-data",
                             str(folder / "test.npy"), "--eval-labels", str(tmp_path / "labels.npy")],
                            capture_output=True, text=True)
    assert result.returncode == 1 and "a float top-1 scores" in result.stderr
    with pytest.raises(octet.Error, match="a detection head's rows, not logits of classes"):
        octet.load_quantized(str(folder / "model.int8")).logit_scale
    result = subprocess.run([octet_bin, "import", str(folder / "model.onnx"), "--dataset", "cifar10", "-o",
                             str(tmp_path / "c.octet")], capture_output=True, text=True)
    assert result.returncode == 1 and not (tmp_path / "c.octet").exists()


def test_summary_lists_the_rows_and_their_convs(octet_bin, detector):
    name, _, folder = detector
    result = subprocess.run([octet_bin, "summary", "--checkpoint", str(folder / "model.octet"), "--json", "-"],
                            capture_output=True, text=True, check=True)
    outputs = json.loads(result.stdout)["outputs"]
    assert [o["name"] for o in outputs] == MODELS[name][1]
    if name == "retina":
        assert outputs[0]["shape"] == [9 * (256 + 64 + 16), 5] and len(outputs[0]["nodes"]) == 3


@pytest.mark.parametrize("detector, decode, shape, largest_size, summary_line, import_line", [
    ("yolov5", "YOLOv5", (3 * (256 + 64 + 16), 7), 4 * 373, "output0 1008x7 (rows of 3 output convs, YOLOv5's decode)",
     "1 output of 3 output convs, decoded as YOLOv5's"),
    ("yolov8", "YOLOv8", (4 + 3, 256 + 64 + 16), 2 * 15 * 8, "output0 7x336 (of 6 output convs, YOLOv8's decode)",
     "1 output of 6 output convs, decoded as YOLOv8's"),
    ("yolov8seg", "YOLOv8", (4 + 3 + 4, 256 + 64 + 16), 2 * 15 * 8,
     "output0 11x336 (of 9 output convs, YOLOv8's decode), output1 4x32x32 (of 1 output conv, a SiLU decode)",
     "2 outputs of 10 output convs, decoded as YOLOv8's"),
    ("yolov8pose", "YOLOv8", (4 + 3 + 5 * 3, 256 + 64 + 16), 2 * 15 * 8,
     "output0 22x336 (of 9 output convs, YOLOv8's decode)", "1 output of 9 output convs, decoded as YOLOv8's")],
                         indirect=["detector"])
def test_yolo_decodes_are_applied_in_float_and_named(detector, decode, shape, largest_size, summary_line, import_line,
                                                     octet_bin, images, tmp_path):
    """YOLOv5's sizes are at most 4 anchors (373 pixels the largest), YOLOv8's 2 x 15 bins at stride 8; a YOLOv8
    segmentation head's mask coefficients follow the class sigmoids undecoded, its prototypes an output of their own;
    a pose head's keypoints follow them decoded, their visibilities sigmoids."""
    name, model, folder = detector
    quantized = octet.load_quantized(str(folder / "model.int8"))
    assert [o["decode"] for o in quantized.outputs] == [name[:6]] + ["silu"] * (name == "yolov8seg")
    assert quantized.outputs[0]["shape"] == shape
    with pytest.raises(octet.Error, match=rf"decoded as {decode}'s .* predict\(images, dequantize=True\)"):
        quantized.predict(images[:2], dequantize=False)
    boxes = as_tuple(quantized.predict(images[32:], dequantize=True))[0]
    values = boxes if name == "yolov5" else np.moveaxis(boxes, 1, -1)  # YOLOv8's: [N, 4 + classes, positions]
    if name == "yolov8seg":  # the prototypes' last conv returned, its SiLU applied in float
        assert quantized.outputs[1]["nodes"] == ["proto.5"]
        with torch.no_grad():
            coefficients = model(torch.from_numpy(images[32:]))[0][:, 4 + 3:].numpy()
        assert sqnr_db(coefficients, boxes[:, 4 + 3:]) >= 30 and values[..., 4 + 3:].min() < 0
        values = values[..., :4 + 3]
    if name == "yolov8pose":
        visibilities = values[..., 4 + 3 + 2::3]
        assert visibilities.shape[-1] == 5 and 0 <= visibilities.min() and visibilities.max() <= 1
        values = values[..., :4 + 3]
    assert 0 <= values[..., 4:].min() and values[..., 4:].max() <= 1  # sigmoids
    assert 0 < values[..., 2:4].min() and values[..., 2:4].max() <= largest_size
    summary = subprocess.run([octet_bin, "summary", "--checkpoint", str(folder / "model.octet")],
                             capture_output=True, text=True, check=True).stdout
    assert summary_line in summary, summary
    imported_line = subprocess.run([octet_bin, "import", str(folder / "model.onnx"), "-o", str(tmp_path / "m.octet")],
                                   capture_output=True, text=True, check=True).stdout
    assert import_line in imported_line, imported_line


class Sigmoided(Retina):
    def forward(self, x):
        return torch.sigmoid(super().forward(x)[0])


class CatOnRows(SsdStyle):
    def forward(self, x):
        rows = super().forward(x)
        return torch.cat([rows, rows], 2)


@pytest.mark.parametrize("kind, fragment", [
    (Sigmoided, "a detection head's (that view permuted, batch first, and returned as rows)"),
    (lambda: Yolov5(grid_offset=0.5), "box centres offset by a grid other than YOLOv5's (w - 0.5, h - 0.5) cells, "
                                      "at (h, w) = (0, 0)"),
    (CatOnRows, "concatenates them over axis 1 (the rows) only"),
    (lambda: Yolov8(anchor_offset=0.0), "YOLOv8 anchors other than the cells' centres (w + 0.5, h + 0.5), at "
                                        "position 0"),
    (lambda: Yolov8(dynamic=True), "a YOLOv8 head exported with dynamic shapes (its levels' shapes read by Shape)"),
    (lambda: Yolov8Pose(cell_shift=0.0), "YOLOv8 keypoint cells other than (w, h), at position 0")])
def test_what_computes_on_the_rows_is_refused_by_name(kind, fragment, octet_bin, tmp_path):
    export(kind(), tmp_path / "model.onnx", ["out"])
    refused(octet_bin, tmp_path / "model.onnx", tmp_path / "model.octet", fragment)


def test_torchvisions_ssdlite_imports_and_returns_its_rows(octet_bin, tmp_path):
    """SSDlite320 (MobileNetV3 large, depthwise heads over 6 levels), untrained, as torchvision builds it."""
    detection = pytest.importorskip("torchvision.models.detection")

    class BackboneAndHead(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.backbone, self.head = model.backbone, model.head

        def forward(self, x):
            out = self.head(list(self.backbone(x).values()))
            return out["bbox_regression"], out["cls_logits"]

    torch.manual_seed(0)
    model = BackboneAndHead(detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)).eval()
    x = varied_inputs(57, 2, (3, 320, 320))
    torchscript_export(model, torch.from_numpy(x[:1]), tmp_path / "ssdlite.onnx", opset_version=13,
                       input_names=["image"], output_names=["boxes", "scores"], dynamic_axes={"image": {0: "n"}})
    ours = imported(octet_bin, tmp_path / "ssdlite.onnx", tmp_path / "ssdlite.octet").predict(x)
    with torch.no_grad():
        expected = [t.numpy() for t in model(torch.from_numpy(x))]
    assert [a.shape for a in ours] == [(2, 3234, 4), (2, 3234, 91)]
    for got, want in zip(ours, expected):
        assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()


class OneLevel(YoloRaw):
    def forward(self, x):
        return super().forward(x)[0]


def test_one_output_of_rows_is_calibrated_by_its_error_not_a_softmax(octet_bin, images, tmp_path):
    """A softmax over a conv's anchors x values per pixel means nothing: auto-global scores the rows' squared
    error, as for several outputs."""
    torch.manual_seed(4)
    export(OneLevel(), tmp_path / "model.onnx", ["p4"])
    imported(octet_bin, tmp_path / "model.onnx", tmp_path / "model.octet")
    np.save(tmp_path / "calibration.npy", images[:32])
    result = subprocess.run([octet_bin, "quantize", "--checkpoint", str(tmp_path / "model.octet"), "--calib-data",
                             str(tmp_path / "calibration.npy"), "--method", "auto-global", "-o",
                             str(tmp_path / "model.int8")], capture_output=True, text=True, check=True)
    assert "auto-global: outputs' relative error" in result.stderr, result.stderr
