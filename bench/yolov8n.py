"""YOLOv8n (ultralytics 8.x: cfg/models/v8/yolov8.yaml at scale n, nn/modules/block.py, nn/modules/head.py) written
out in PyTorch: the same layers and shapes, and the ONNX graph of a static `yolo export format=onnx` (shapes and the
anchors constant), without the ultralytics package (not on the build machine). `Yolov8n(decode=True)` is Detect in
inference mode ("output0", [N, 4 + 80, 8400] at 640 x 640: boxes as centre and size in pixels, class sigmoids);
`decode=False` returns the six head convs' outputs (per level boxes, then classes), which torch.ao's FX can trace, and
`decode()` applies Detect's decode to them in float. `Yolov8nSeg` is YOLOv8n-seg, `Yolov8nPose` YOLOv8n-pose, their
Segment and Pose heads likewise."""

import torch
from torch import nn

STRIDES = (8.0, 16.0, 32.0)
BINS = 16  # Detect's reg_max


class Conv(nn.Sequential):
    def __init__(self, c1, c2, k=1, s=1):
        super().__init__(nn.Conv2d(c1, c2, k, s, k // 2, bias=False), nn.BatchNorm2d(c2), nn.SiLU())


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut):
        super().__init__()
        self.cv1, self.cv2, self.add = Conv(c, c, 3), Conv(c, c, 3), shortcut

    def forward(self, x):
        return x + self.cv2(self.cv1(x)) if self.add else self.cv2(self.cv1(x))


class C2f(nn.Module):
    def __init__(self, c1, c2, n=1, shortcut=False):
        super().__init__()
        self.c = c2 // 2
        self.cv1, self.cv2 = Conv(c1, 2 * self.c, 1), Conv((2 + n) * self.c, c2, 1)
        self.m = nn.ModuleList(Bottleneck(self.c, shortcut) for _ in range(n))

    def forward(self, x):
        y = self.cv1(x)
        y = [y[:, :self.c], y[:, self.c:]]  # chunk(2, 1), in a form torch 1.13's FX traces on Python 3.11
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    def __init__(self, c1, c2, k=5):
        super().__init__()
        self.cv1, self.cv2, self.m = Conv(c1, c1 // 2, 1), Conv(c1 // 2 * 4, c2, 1), nn.MaxPool2d(k, 1, k // 2)

    def forward(self, x):
        y = [self.cv1(x)]
        y.extend(self.m(y[-1]) for _ in range(3))
        return self.cv2(torch.cat(y, 1))


def decode(heads, dfl, nc=80):
    """Detect's inference-mode decode of the six head convs' outputs (boxes and classes per level) with DFL's fixed
    conv `dfl`: [N, 4 + nc, P]. lt and rb by split, not Detect's chunk: torch 1.13 exports a chunk through the
    tensor's shape, which a static export's simplifier folds into the Split or Slices it has."""
    levels, centres, strides = [], [], []
    for level in range(3):
        box, cls = heads[2 * level], heads[2 * level + 1]
        h, w = int(box.shape[2]), int(box.shape[3])  # Python's ints: constants in an export, as a static one's
        levels.append(torch.cat((box, cls), 1).view(-1, 4 * BINS + nc, h * w))
        yv, xv = torch.meshgrid(torch.arange(h) + 0.5, torch.arange(w) + 0.5, indexing="ij")
        centres.append(torch.stack((xv, yv), -1).view(-1, 2))
        strides.append(torch.full((h * w, 1), STRIDES[level]))
    x_cat = torch.cat(levels, 2)
    positions = int(x_cat.shape[2])
    box, cls = x_cat.split((4 * BINS, nc), 1)
    distances = dfl(box.view(-1, 4, BINS, positions).transpose(2, 1).softmax(1))
    lt, rb = distances.view(-1, 4, positions).split((2, 2), 1)
    anchors, stride = torch.cat(centres).transpose(0, 1).unsqueeze(0), torch.cat(strides).transpose(0, 1)
    x1y1, x2y2 = anchors - lt, anchors + rb
    return torch.cat((torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * stride, cls.sigmoid()), 1)


class Yolov8n(nn.Module):
    def __init__(self, nc=80, decode=True):
        super().__init__()
        self.nc, self.decode = nc, decode
        self.backbone = nn.ModuleList([Conv(3, 16, 3, 2), Conv(16, 32, 3, 2), C2f(32, 32, 1, True), Conv(32, 64, 3, 2),
                                       C2f(64, 64, 2, True), Conv(64, 128, 3, 2), C2f(128, 128, 2, True),
                                       Conv(128, 256, 3, 2), C2f(256, 256, 1, True), SPPF(256, 256)])
        self.top4, self.out3 = C2f(384, 128, 1), C2f(192, 64, 1)
        self.down3, self.out4 = Conv(64, 64, 3, 2), C2f(192, 128, 1)
        self.down4, self.out5 = Conv(128, 128, 3, 2), C2f(384, 256, 1)
        c2, c3 = max(16, 64 // 4, 4 * BINS), max(64, min(nc, 100))
        self.cv2 = nn.ModuleList(nn.Sequential(Conv(c, c2, 3), Conv(c2, c2, 3), nn.Conv2d(c2, 4 * BINS, 1))
                                 for c in (64, 128, 256))
        self.cv3 = nn.ModuleList(nn.Sequential(Conv(c, c3, 3), Conv(c3, c3, 3), nn.Conv2d(c3, nc, 1))
                                 for c in (64, 128, 256))
        self.dfl = nn.Conv2d(BINS, 1, 1, bias=False).requires_grad_(False)
        self.dfl.weight.data[:] = torch.arange(BINS, dtype=torch.float32).view(1, BINS, 1, 1)
        for a, b, s in zip(self.cv2, self.cv3, STRIDES):  # Detect's bias_init: box and class priors
            a[-1].bias.data[:] = 1.0
            b[-1].bias.data[:nc] = torch.log(torch.tensor(5 / nc / (640 / s) ** 2))

    def forward(self, x):
        heads = self.detect_convs(self.levels(x))
        return decode(heads, self.dfl, self.nc) if self.decode else tuple(heads)

    def levels(self, x):
        """The PAN's outputs at strides 8, 16 and 32."""
        features = []
        for layer in self.backbone:
            x = layer(x)
            features.append(x)
        up = nn.functional.interpolate
        h12 = self.top4(torch.cat((up(x, scale_factor=2.0, mode="nearest"), features[6]), 1))
        o3 = self.out3(torch.cat((up(h12, scale_factor=2.0, mode="nearest"), features[4]), 1))
        o4 = self.out4(torch.cat((self.down3(o3), h12), 1))
        return o3, o4, self.out5(torch.cat((self.down4(o4), x), 1))

    def detect_convs(self, levels):
        heads = []
        for a, b, o in zip(self.cv2, self.cv3, levels):
            heads.extend((a(o), b(o)))
        return heads


class Proto(nn.Sequential):
    """Segment's mask prototypes: a conv, a 2x2 ConvTranspose of stride 2 (twice the size), two convs."""

    def __init__(self, c1, c_, c2):
        super().__init__(Conv(c1, c_, 3), nn.ConvTranspose2d(c_, c_, 2, 2, 0, bias=True), Conv(c_, c_, 3), Conv(c_, c2))


def segment(heads, dfl, nc=80):
    """Segment's inference outputs from its convs' (Detect's six, the three mask coefficient convs, the prototypes):
    output0 Detect's with each position's mask coefficients concatenated after the classes, output1 the
    prototypes."""
    coefficients = torch.cat([y.view(-1, int(y.shape[1]), int(y.shape[2]) * int(y.shape[3])) for y in heads[6:9]], 2)
    return torch.cat((decode(heads[:6], dfl, nc), coefficients), 1), heads[9]


class Yolov8nSeg(Yolov8n):
    """YOLOv8n-seg (cfg/models/v8/yolov8-seg.yaml at scale n: Segment(nc, 32 masks, 256 prototype channels x 0.25)):
    output0 [N, 4 + 80 + 32, 8400] and output1 [N, 32, 160, 160] at 640 x 640; `decode=False` returns its ten convs'
    outputs, `segment()` makes the two from them in float."""

    def __init__(self, nc=80, decode=True, masks=32):
        super().__init__(nc, decode)
        c4 = max(64 // 4, masks)
        self.cv4 = nn.ModuleList(nn.Sequential(Conv(c, c4, 3), Conv(c4, c4, 3), nn.Conv2d(c4, masks, 1))
                                 for c in (64, 128, 256))
        self.proto = Proto(64, 64, masks)

    def forward(self, x):
        levels = self.levels(x)
        heads = self.detect_convs(levels) + [m(o) for m, o in zip(self.cv4, levels)] + [self.proto(levels[0])]
        return segment(heads, self.dfl, self.nc) if self.decode else tuple(heads)


def keypoints(heads, dfl, nc=1, kpt_shape=(17, 3)):
    """Pose's inference output from its convs' (Detect's six, the three keypoint convs): Detect's with each position's
    keypoints after the classes, decoded as kpts_decode exports it: (2 v + cell) x stride for x and y, the
    visibility's sigmoid."""
    k, values = kpt_shape
    kpt = torch.cat([y.view(-1, k * values, int(y.shape[2]) * int(y.shape[3])) for y in heads[6:9]], 2)
    positions = int(kpt.shape[2])
    cells, strides = [], []
    for y, stride in zip(heads[6:9], STRIDES):  # make_anchors(..., 0.5) - 0.5: each cell's (w, h)
        h, w = int(y.shape[2]), int(y.shape[3])
        yv, xv = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                                indexing="ij")
        cells.append(torch.stack((xv, yv), -1).view(-1, 2))
        strides.append(torch.full((h * w, 1), stride))
    y = kpt.view(-1, k, values, positions)
    xy = (y[:, :, :2] * 2.0 + torch.cat(cells).transpose(0, 1)) * torch.cat(strides).transpose(0, 1)
    decoded = torch.cat((xy, y[:, :, 2:3].sigmoid()), 2).view(-1, k * values, positions)
    return torch.cat((decode(heads[:6], dfl, nc), decoded), 1)


class Yolov8nPose(Yolov8n):
    """YOLOv8n-pose (cfg/models/v8/yolov8-pose.yaml at scale n: Pose(1 class, 17 keypoints of 3 values)): output0
    [N, 4 + 1 + 51, 8400] at 640 x 640; `decode=False` returns its nine convs' outputs, `keypoints()` makes output0
    from them in float."""

    def __init__(self, nc=1, decode=True, kpt_shape=(17, 3)):
        super().__init__(nc, decode)
        self.kpt_shape, values = kpt_shape, kpt_shape[0] * kpt_shape[1]
        c4 = max(64 // 4, values)
        self.cv4 = nn.ModuleList(nn.Sequential(Conv(c, c4, 3), Conv(c4, c4, 3), nn.Conv2d(c4, values, 1))
                                 for c in (64, 128, 256))

    def forward(self, x):
        levels = self.levels(x)
        heads = self.detect_convs(levels) + [m(o) for m, o in zip(self.cv4, levels)]
        return keypoints(heads, self.dfl, self.nc, self.kpt_shape) if self.decode else tuple(heads)
