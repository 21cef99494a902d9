"""YOLOv5s (ultralytics/yolov5 v7.0: models/yolov5s.yaml, models/common.py, models/yolo.py) written out in PyTorch:
the same layers, shapes and ONNX graph as `export.py --include onnx` gives, without the ultralytics package (not on the
build machine). `Yolov5s(decode=True)` is Detect in inference mode (each level's rows decoded to boxes in pixels,
objectness and class scores, concatenated: "output0", [N, 25200, 85] at 640 x 640); `decode=False` returns the three
head convs' outputs, which torch.ao's FX can trace (Detect unpacks a shape), and `decode()` applies Detect's decode to
them in float."""

import math

import torch
from torch import nn

ANCHORS = torch.tensor([[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326]],
                       dtype=torch.float32).view(3, 3, 2)  # in pixels, per level (stride 8, 16, 32)
STRIDES = (8.0, 16.0, 32.0)


class Conv(nn.Sequential):
    def __init__(self, c1, c2, k=1, s=1, p=None):
        super().__init__(nn.Conv2d(c1, c2, k, s, k // 2 if p is None else p, bias=False), nn.BatchNorm2d(c2), nn.SiLU())


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1, self.cv2, self.add = Conv(c, c, 1), Conv(c, c, 3), shortcut

    def forward(self, x):
        return x + self.cv2(self.cv1(x)) if self.add else self.cv2(self.cv1(x))


class C3(nn.Module):
    def __init__(self, c1, c2, n=1, shortcut=True):
        super().__init__()
        c = c2 // 2
        self.cv1, self.cv2, self.cv3 = Conv(c1, c, 1), Conv(c1, c, 1), Conv(2 * c, c2, 1)
        self.m = nn.Sequential(*(Bottleneck(c, shortcut) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))


class SPPF(nn.Module):
    def __init__(self, c1, c2, k=5):
        super().__init__()
        self.cv1, self.cv2, self.m = Conv(c1, c1 // 2, 1), Conv(c1 // 2 * 4, c2, 1), nn.MaxPool2d(k, 1, k // 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat((x, y1, y2, self.m(y2)), 1))


GRIDS = {}  # (level, ny, nx) -> grid, anchor_grid: made once, as Detect keeps them (an export sees constants)


def grids(level, ny, nx):
    if (level, ny, nx) not in GRIDS:
        yv, xv = torch.meshgrid(torch.arange(ny, dtype=torch.float32), torch.arange(nx, dtype=torch.float32),
                                indexing="ij")
        shape = 1, 3, ny, nx, 2
        GRIDS[level, ny, nx] = (torch.stack((xv, yv), 2).expand(shape) - 0.5,
                                ANCHORS[level].view((1, 3, 1, 1, 2)).expand(shape))
    return GRIDS[level, ny, nx]


def decode(level, y, nc=80):
    """Detect's inference-mode decode of head conv `level`'s output y, as its rows [N, 3 H W, 5 + nc]."""
    bs, _, ny, nx = y.shape
    y = y.view(bs, 3, nc + 5, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
    grid, anchor_grid = grids(level, int(ny), int(nx))
    xy, wh, conf = y.sigmoid().split((2, 2, nc + 1), 4)
    xy = (xy * 2 + grid) * STRIDES[level]
    wh = (wh * 2) ** 2 * anchor_grid
    return torch.cat((xy, wh, conf), 4).view(bs, 3 * nx * ny, nc + 5)


class Yolov5s(nn.Module):
    def __init__(self, nc=80, decode=True):
        super().__init__()
        self.nc, self.decode = nc, decode
        self.backbone = nn.ModuleList([Conv(3, 32, 6, 2, 2), Conv(32, 64, 3, 2), C3(64, 64, 1), Conv(64, 128, 3, 2),
                                       C3(128, 128, 2), Conv(128, 256, 3, 2), C3(256, 256, 3), Conv(256, 512, 3, 2),
                                       C3(512, 512, 1), SPPF(512, 512)])
        self.lateral5, self.top4 = Conv(512, 256, 1), C3(512, 256, 1, False)
        self.lateral4, self.out3 = Conv(256, 128, 1), C3(256, 128, 1, False)
        self.down3, self.out4 = Conv(128, 128, 3, 2), C3(256, 256, 1, False)
        self.down4, self.out5 = Conv(256, 256, 3, 2), C3(512, 512, 1, False)
        self.m = nn.ModuleList(nn.Conv2d(c, 3 * (nc + 5), 1) for c in (128, 256, 512))
        for conv, s in zip(self.m, STRIDES):  # Detect's _initialize_biases: objectness and class priors
            b = conv.bias.view(3, -1)
            b.data[:, 4] += math.log(8 / (640 / s) ** 2)
            b.data[:, 5:] += math.log(0.6 / (nc - 0.99))

    def forward(self, x):
        features = []
        for i, layer in enumerate(self.backbone):
            x = layer(x)
            features.append(x)
        p3, p4 = features[4], features[6]
        up = nn.functional.interpolate
        h10 = self.lateral5(x)
        h14 = self.lateral4(self.top4(torch.cat((up(h10, scale_factor=2.0, mode="nearest"), p4), 1)))
        o3 = self.out3(torch.cat((up(h14, scale_factor=2.0, mode="nearest"), p3), 1))
        o4 = self.out4(torch.cat((self.down3(o3), h14), 1))
        o5 = self.out5(torch.cat((self.down4(o4), h10), 1))
        heads = [m(o) for m, o in zip(self.m, (o3, o4, o5))]
        if not self.decode:
            return tuple(heads)
        return torch.cat([decode(i, y, self.nc) for i, y in enumerate(heads)], 1)
