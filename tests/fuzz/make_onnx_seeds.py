"""Writes the seed corpus of fuzz_onnx_import (tests/fuzz/corpus/onnx_import):
small CNNs as torch.onnx.export writes them, with random weights. Run with
Debian's python3 (torch, torchvision and onnx): /usr/bin/python3 tests/fuzz/make_onnx_seeds.py"""

import pathlib
import sys

import onnx
import torch
import torchvision
from torch import nn

OUT = pathlib.Path(__file__).resolve().parent / "corpus" / "onnx_import"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python" / "tests"))
from dynamo_forms import as_dynamo_writes  # noqa: E402


class Tiny(nn.Module):
    def __init__(self, by_view):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.depthwise = nn.Conv2d(4, 4, 3, padding=1, groups=4)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 8 * 8, 10)
        self.by_view = by_view

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = self.pool(torch.relu(self.depthwise(y)) + y)
        y = y.view(y.size(0), -1) if self.by_view else torch.flatten(y, 1)
        return torch.softmax(self.fc(y), 1)


class Padded(nn.Module):
    """Zeros on some sides only: a Pad before a stride-2 conv (TensorFlow's "SAME") and before a max pool."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2)
        self.fc = nn.Linear(4 * 9 * 9, 10)

    def forward(self, x):
        y = torch.relu(self.conv(nn.functional.pad(x, (0, 1, 0, 1))))
        y = nn.functional.max_pool2d(nn.functional.pad(y, (1, 0, 0, 1)), 2, ceil_mode=True)
        return self.fc(torch.flatten(y, 1))


class ChannelsLast(nn.Module):
    """ConvNeXt's block: LayerNorm, Linear layers and GELU on a channels-last view, a layer scale."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 4, stride=4)
        self.norm = nn.LayerNorm(8, eps=1e-6)
        self.expand = nn.Linear(8, 16)
        self.project = nn.Linear(16, 8)
        self.scale = nn.Parameter(torch.full((8, 1, 1), 0.5))
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        y = self.conv(x)
        z = self.project(nn.functional.gelu(self.expand(self.norm(y.permute(0, 2, 3, 1)))))
        return self.fc((y + self.scale * z.permute(0, 3, 1, 2)).mean((2, 3)))


def write_channels_last():
    torch.manual_seed(1)
    torch.onnx.export(ChannelsLast().eval(), torch.zeros(1, 3, 32, 32), str(OUT / "channels_last.onnx"),
                      opset_version=13, input_names=["x"])


class TransformedInput(nn.Module):
    """torchvision's GoogLeNet._transform_input (Gather of each colour, Unsqueeze, Mul, Add, Concat), a conv."""

    transform_input = True

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 4, stride=4)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        x = torchvision.models.GoogLeNet._transform_input(self, x)
        return self.fc(self.conv(x).mean((2, 3)))


def write_transform_input():
    torch.manual_seed(2)
    torch.onnx.export(TransformedInput().eval(), torch.zeros(1, 3, 32, 32), str(OUT / "transform_input.onnx"),
                      opset_version=13, input_names=["x"])


def write_external_data():
    """Its weights in external data (the fuzzer's scratch folder lacks the data file: a refusal, or its mutated
    locations, offsets and lengths)."""
    torch.manual_seed(3)
    path = OUT / "external_data.onnx"
    torch.onnx.export(Padded().eval(), torch.zeros(1, 3, 32, 32), str(path), opset_version=13, input_names=["x"])
    onnx.save(onnx.load(str(path)), str(path), save_as_external_data=True, location="external_data.onnx.data",
              size_threshold=0)
    (OUT / "external_data.onnx.data").unlink()


class Nhwc(nn.Module):
    """TensorFlow's form: an N x H x W x C input, a Transpose to N x C x H x W, the pooled features squeezed."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 4, stride=4)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        return self.fc(self.conv(x.permute(0, 3, 1, 2)).mean((2, 3), keepdim=True).squeeze(3).squeeze(2))


def write_nhwc():
    torch.manual_seed(4)
    torch.onnx.export(Nhwc().eval(), torch.zeros(1, 32, 32, 3), str(OUT / "nhwc.onnx"), opset_version=13,
                      input_names=["x"])


class KerasFlatten(nn.Module):
    """Keras's Flatten before a Dense layer: the channels-last value reshaped to (batch, features)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 4, stride=4)
        self.fc = nn.Linear(4 * 8 * 8, 10)

    def forward(self, x):
        x = self.conv(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        return self.fc(x.reshape(x.shape[0], -1))


def write_keras_flatten():
    torch.manual_seed(12)
    torch.onnx.export(KerasFlatten().eval(), torch.zeros(1, 32, 32, 3), str(OUT / "keras_flatten.onnx"),
                      opset_version=13, input_names=["x"])


class PerChannelPRelu(nn.Module):
    """PReLU's slope per channel (ArcFace's iresnet), and one whose slopes are equal (a leaky ReLU)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2)
        self.prelu = nn.PReLU(4)
        self.same = nn.PReLU(4)
        self.fc = nn.Linear(4, 10)
        with torch.no_grad():
            self.prelu.weight.copy_(torch.tensor([-0.2, 0.1, 0.25, 1.2]))

    def forward(self, x):
        return self.fc(self.same(self.prelu(self.conv(x))).mean((2, 3)))


def write_prelu():
    torch.manual_seed(5)
    torch.onnx.export(PerChannelPRelu().eval(), torch.zeros(1, 3, 32, 32), str(OUT / "prelu_per_channel.onnx"),
                      opset_version=13, input_names=["x"])


class GroupNorms(nn.Module):
    """torch's GroupNorm (Reshape, InstanceNormalization, Reshape, Mul, Add) and InstanceNorm2d with its affine."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2)
        self.group = nn.GroupNorm(2, 4)
        self.instance = nn.InstanceNorm2d(4, affine=True)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        return self.fc(self.instance(torch.relu(self.group(self.conv(x)))).mean((2, 3)))


def write_group_norms():
    torch.manual_seed(6)
    torch.onnx.export(GroupNorms().eval(), torch.zeros(1, 3, 32, 32), str(OUT / "group_norms.onnx"),
                      opset_version=13, input_names=["x"])


class RectPools(nn.Module):
    """Pools whose window and stride differ down and across, and a GlobalMaxPool of an 8x6 image."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.tall = nn.MaxPool2d((3, 1), stride=(2, 1), padding=(1, 0))
        self.wide = nn.AvgPool2d((1, 3), stride=(1, 3), padding=(0, 1), count_include_pad=False)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        return self.fc(nn.functional.adaptive_max_pool2d(self.wide(self.tall(self.conv(x))), 1).flatten(1))


def write_rect_pools():
    torch.manual_seed(12)
    torch.onnx.export(RectPools().eval(), torch.zeros(1, 3, 32, 32), str(OUT / "rect_pools.onnx"), opset_version=13,
                      input_names=["x"])


class OneRow(nn.Module):
    """A 1-D CNN over N x 2 x 64 inputs: Conv1d, BatchNorm1d, MaxPool1d, a padded AvgPool1d (a Pad before it),
    a per-channel constant and x.mean(-1)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 4, 5, stride=2, padding=2)
        self.bn = nn.BatchNorm1d(4)
        self.pool = nn.MaxPool1d(2)
        self.average = nn.AvgPool1d(3, stride=2, padding=1)
        self.gain = nn.Parameter(torch.rand(4, 1) + 0.5)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        return self.fc((self.average(self.pool(torch.relu(self.bn(self.conv(x))))) * self.gain).mean(-1))


def write_one_row():
    torch.manual_seed(13)
    torch.onnx.export(OneRow().eval(), torch.zeros(1, 2, 64), str(OUT / "one_row.onnx"), opset_version=13,
                      input_names=["x"])


class OneRowSeparable(nn.Module):
    """A 1-D CNN of time-channel separable convs (MatchboxNet's): a depthwise Conv1d padded to keep the length (a
    Pad before it), a dilated one, each before a pointwise Conv1d."""

    def __init__(self):
        super().__init__()
        self.depthwise = nn.Conv1d(4, 4, 5, padding=2, groups=4)
        self.pointwise = nn.Conv1d(4, 6, 1)
        self.dilated = nn.Conv1d(6, 6, 3, dilation=2, groups=6)
        self.fc = nn.Linear(6, 10)

    def forward(self, x):
        return self.fc(self.dilated(torch.relu(self.pointwise(self.depthwise(x)))).mean(-1))


def write_one_row_separable():
    torch.manual_seed(14)
    torch.onnx.export(OneRowSeparable().eval(), torch.zeros(1, 4, 32), str(OUT / "one_row_separable.onnx"),
                      opset_version=13, input_names=["x"])


class SpatialAttention(nn.Module):
    """CBAM's spatial attention: the mean and maximum of each pixel's channels (ReduceMean, ReduceMax over axis 1),
    concatenated, a 7x7 conv, its sigmoid, a gate per pixel (Mul by N x 1 x H x W)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.spatial = nn.Conv2d(2, 1, 7, padding=3)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        gate = torch.sigmoid(self.spatial(torch.cat([x.mean(1, keepdim=True), x.amax(1, keepdim=True)], 1)))
        return self.fc((x * gate).mean((2, 3)))


def write_spatial_attention():
    torch.manual_seed(15)
    torch.onnx.export(SpatialAttention().eval(), torch.zeros(1, 3, 16, 16), str(OUT / "spatial_attention.onnx"),
                      opset_version=13, input_names=["x"])


class ExpandedGate(nn.Module):
    """SENet's reference squeeze-and-excitation: Linear layers over the pooled channels, y.view(b, c, 1, 1),
    x * y.expand_as(x) (Shape, Expand)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.gate = nn.Sequential(nn.Linear(8, 2), nn.ReLU(), nn.Linear(2, 8), nn.Sigmoid())
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        y = self.gate(x.mean((2, 3))).view(x.size(0), 8, 1, 1)
        return self.fc((x * y.expand_as(x)).mean((2, 3)))


def write_expanded_gate():
    torch.manual_seed(16)
    torch.onnx.export(ExpandedGate().eval(), torch.zeros(1, 3, 16, 16), str(OUT / "expanded_gate.onnx"),
                      opset_version=13, input_names=["x"], dynamic_axes={"x": {0: "n"}})


class EcaHead(nn.Module):
    """ECA-Net's gate as its reference writes it (Squeeze, Transpose, a Conv1d along the channels, Transpose,
    Unsqueeze), then fastai's head: BatchNorm1d of the pooled features before each Linear layer."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.eca = nn.Conv1d(1, 1, 3, padding=1, bias=False)
        self.head = nn.Sequential(nn.BatchNorm1d(8), nn.Linear(8, 6), nn.ReLU(), nn.BatchNorm1d(6), nn.Linear(6, 10))

    def forward(self, x):
        x = torch.relu(self.conv(x))
        y = self.eca(nn.functional.adaptive_avg_pool2d(x, 1).squeeze(-1).transpose(-1, -2))
        x = x * torch.sigmoid(y.transpose(-1, -2).unsqueeze(-1)).expand_as(x)
        return self.head(x.mean((2, 3)))


def write_channel_sequence():
    torch.manual_seed(17)
    torch.onnx.export(EcaHead().eval(), torch.zeros(1, 3, 16, 16), str(OUT / "channel_sequence.onnx"),
                      opset_version=13, input_names=["x"])


class PixelsToChannels(nn.Module):
    """YOLOv5's Focus (Slices with a step of 2, a Concat), then nn.PixelUnshuffle (Reshape to 6-D, Transpose,
    Reshape back)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(12, 4, 3, padding=1)
        self.unshuffle = nn.PixelUnshuffle(2)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)
        return self.fc(self.unshuffle(torch.relu(self.conv(x))).mean((2, 3)))


def write_pixels_to_channels():
    torch.manual_seed(18)
    torch.onnx.export(PixelsToChannels().eval(), torch.zeros(1, 3, 16, 16), str(OUT / "pixels_to_channels.onnx"),
                      opset_version=13, input_names=["x"])


class Resized(nn.Module):
    """HRNet's fuse (nn.Upsample by 2, added to the finer branch) and an FPN's F.interpolate to a feature's size
    (Resize's sizes from Shape arithmetic), then a downsample by half."""

    def __init__(self):
        super().__init__()
        self.fine, self.coarse = nn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(4, 4, 3, 2, 1)
        self.up = nn.Upsample(scale_factor=2)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        fine = self.fine(x)
        coarse = self.coarse(fine)
        y = fine + self.up(coarse) + nn.functional.interpolate(coarse, size=fine.shape[-2:])
        return self.fc(nn.functional.interpolate(y, scale_factor=0.5).mean((2, 3)))


def write_resized():
    torch.manual_seed(20)
    torch.onnx.export(Resized().eval(), torch.zeros(1, 3, 16, 16), str(OUT / "resized.onnx"), opset_version=13,
                      input_names=["x"], dynamic_axes={"x": {0: "n"}})


class GlobalResponseNorm(nn.Module):
    """ConvNeXt-V2's GRN on channels-last values: ReduceL2 over height and width, ReduceMean over the channels,
    Add eps, Div, Mul, Mul by gamma, Add beta, Add x."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.gamma, self.beta = nn.Parameter(torch.rand(1, 1, 1, 8)), nn.Parameter(torch.rand(1, 1, 1, 8))
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.conv(x).permute(0, 2, 3, 1)
        gx = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
        x = self.gamma * (x * (gx / (gx.mean(dim=-1, keepdim=True) + 1e-6))) + self.beta + x
        return self.fc(x.mean((1, 2)))


def write_global_response_norm():
    torch.manual_seed(21)
    torch.onnx.export(GlobalResponseNorm().eval(), torch.zeros(1, 3, 16, 16), str(OUT / "global_response_norm.onnx"),
                      opset_version=13, input_names=["x"])


class Powers(nn.Module):
    """PixelNorm (Pow 2, ReduceMean over the channels, Add, Sqrt, Div of 1 by it, Mul), Sqrt and Reciprocal, then
    F.normalize of the pooled features (ReduceL2, Clip, Expand, Div) before the classifier."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-8) + torch.reciprocal(1 + torch.sqrt(x))
        return self.fc(nn.functional.normalize(x.mean((2, 3)), dim=1))


def write_powers():
    torch.manual_seed(22)
    torch.onnx.export(Powers().eval(), torch.zeros(1, 3, 16, 16), str(OUT / "powers.onnx"), opset_version=13,
                      input_names=["x"], dynamic_axes={"x": {0: "n"}})


class CoordinateAttention(nn.Module):
    """Coordinate Attention as timm writes it: means over the width and the height, the second transposed, a Concat
    over the height, a 1x1 conv and ReLU over both, a Split back, a Transpose back, gates broadcast in a Mul."""

    def __init__(self):
        super().__init__()
        self.conv, self.mix = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 1)
        self.gate_h, self.gate_w = nn.Conv2d(8, 8, 1), nn.Conv2d(8, 8, 1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        h, w = x.shape[2], x.shape[3]
        y = torch.relu(self.mix(torch.cat([x.mean(3, keepdim=True), x.mean(2, keepdim=True).transpose(-1, -2)], 2)))
        y_h, y_w = torch.split(y, [h, w], dim=2)
        x = x * self.gate_h(y_h).sigmoid() * self.gate_w(y_w.transpose(-1, -2)).sigmoid()
        return self.fc(x.mean((2, 3)))


def write_coordinate_attention():
    torch.manual_seed(23)
    torch.onnx.export(CoordinateAttention().eval(), torch.zeros(1, 3, 16, 12), str(OUT / "coordinate_attention.onnx"),
                      opset_version=13, input_names=["x"], dynamic_axes={"x": {0: "n"}})


class GlobalContext(nn.Module):
    """GCNet's global context block as mmcv writes it: a mask's softmax over its positions (Reshape to [N, 1, HW],
    Softmax, Unsqueeze), the image's [N, 1, C, HW] view times it (MatMul), a Reshape to [N, C, 1, 1], a bottleneck
    with nn.LayerNorm([C, 1, 1]) (ReduceMean over axes 1, 2, 3), added to every pixel."""

    def __init__(self):
        super().__init__()
        self.conv, self.mask = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 1, 1)
        self.add = nn.Sequential(nn.Conv2d(8, 4, 1), nn.LayerNorm([4, 1, 1]), nn.ReLU(), nn.Conv2d(4, 8, 1))
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        n, c, h, w = x.shape
        weights = torch.softmax(self.mask(x).view(n, 1, h * w), -1).unsqueeze(-1)
        context = torch.matmul(x.view(n, c, h * w).unsqueeze(1), weights).view(n, c, 1, 1)
        return self.fc((x + self.add(context)).mean((2, 3)))


def write_global_context():
    torch.manual_seed(24)
    torch.onnx.export(GlobalContext().eval(), torch.zeros(1, 3, 12, 10), str(OUT / "global_context.onnx"),
                      opset_version=13, input_names=["x"], dynamic_axes={"x": {0: "n"}})


class BottleneckAttention(nn.Module):
    """BAM as its authors write it: a channel gate (pooled rows, Linear, Unsqueeze at 2 and 3, Expand) times a
    spatial gate (a conv to one channel, Expand), x * (1 + sigmoid(product))."""

    def __init__(self):
        super().__init__()
        self.conv, self.channel, self.spatial = nn.Conv2d(3, 8, 3, padding=1), nn.Linear(8, 8), nn.Conv2d(8, 1, 1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        channel = self.channel(x.mean((2, 3))).unsqueeze(2).unsqueeze(3).expand_as(x)
        return self.fc(((1 + torch.sigmoid(channel * self.spatial(x).expand_as(x))) * x).mean((2, 3)))


def write_bottleneck_attention():
    torch.manual_seed(25)
    torch.onnx.export(BottleneckAttention().eval(), torch.zeros(1, 3, 12, 10),
                      str(OUT / "bottleneck_attention.onnx"), opset_version=13, input_names=["x"],
                      dynamic_axes={"x": {0: "n"}})


class SimAM(nn.Module):
    """SimAM as its authors write it: x - x.mean((2, 3)), squared, a ReduceSum over height and width divided by
    H W - 1 (shape arithmetic cast to float), a Div by that, a sigmoid gate."""

    def __init__(self):
        super().__init__()
        self.conv, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        n = x.shape[2] * x.shape[3] - 1
        d = (x - x.mean(dim=[2, 3], keepdim=True)).pow(2)
        return self.fc((x * torch.sigmoid(d / (4 * (d.sum(dim=[2, 3], keepdim=True) / n + 1e-4)) + 0.5)).mean((2, 3)))


def write_simam():
    torch.manual_seed(26)
    torch.onnx.export(SimAM().eval(), torch.zeros(1, 3, 12, 10), str(OUT / "simam.onnx"), opset_version=13,
                      input_names=["x"], dynamic_axes={"x": {0: "n"}})


class Segmenter(nn.Module):
    """An image of logits (class scores per pixel): features at half size, a 1x1 classifier, a bilinear Resize
    (pixel centres or corners aligned)."""

    def __init__(self, align_corners):
        super().__init__()
        self.conv, self.fc = nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 5, 1)
        self.align_corners = align_corners

    def forward(self, x):
        scores = self.fc(torch.relu(self.conv(x)))
        return nn.functional.interpolate(scores, scale_factor=2.0, mode="bilinear", align_corners=self.align_corners)


def write_segmenter():
    for name, align_corners in (("segmenter", False), ("segmenter_corners", True)):
        torch.manual_seed(27)
        torch.onnx.export(Segmenter(align_corners).eval(), torch.zeros(1, 3, 12, 10), str(OUT / f"{name}.onnx"),
                          opset_version=13, input_names=["x"], dynamic_axes={"x": {0: "n"}})


class Heads(nn.Module):
    """A detection net's outputs: boxes at half the input's size, scores (a sigmoid) at a quarter, the quarter-size
    features, which the scores read too."""

    def __init__(self):
        super().__init__()
        self.fine = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.coarse = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.boxes, self.scores = nn.Conv2d(8, 4, 1), nn.Conv2d(8, 3, 1)

    def forward(self, x):
        fine = torch.relu(self.fine(x))
        coarse = torch.relu(self.coarse(fine))
        return self.boxes(fine), torch.sigmoid(self.scores(coarse)), coarse


def write_heads():
    torch.manual_seed(28)
    torch.onnx.export(Heads().eval(), torch.zeros(1, 3, 16, 12), str(OUT / "heads.onnx"), opset_version=13,
                      input_names=["x"], output_names=["boxes", "scores", "features"], dynamic_axes={"x": {0: "n"}})


class DetectionRows(nn.Module):
    """A detection head's rows: per level, channels viewed as [N, A, K, H, W], permuted to [N, H, W, A, K] and
    flattened to rows of K, concatenated (RetinaNet's); and channels last to rows of 4 (SSD ports')."""

    def __init__(self):
        super().__init__()
        self.fine, self.coarse = nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 8, 3, 2, 1)
        self.scores, self.boxes = nn.ModuleList([nn.Conv2d(8, 6, 1), nn.Conv2d(8, 6, 1)]), nn.Conv2d(8, 8, 1)

    def forward(self, x):
        fine = torch.relu(self.fine(x))
        coarse = torch.relu(self.coarse(fine))
        rows = []
        for level, conv in zip((fine, coarse), self.scores):
            y = conv(level)
            n, _, h, w = y.shape
            rows.append(y.view(n, 2, 3, h, w).permute(0, 3, 4, 1, 2).reshape(n, -1, 3))
        boxes = self.boxes(coarse).permute(0, 2, 3, 1).reshape(x.shape[0], -1, 4)
        return torch.cat(rows, 1), boxes


def write_detection_rows():
    torch.manual_seed(29)
    torch.onnx.export(DetectionRows().eval(), torch.zeros(1, 3, 8, 12), str(OUT / "detection_rows.onnx"),
                      opset_version=13, input_names=["x"], output_names=["scores", "boxes"],
                      dynamic_axes={"x": {0: "n"}})


class Yolov5Decode(nn.Module):
    """YOLOv5's Detect in inference mode on one level: 2 anchors x (box, objectness, 1 class), decoded."""

    def __init__(self):
        super().__init__()
        self.conv, self.head = nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 12, 1)
        yv, xv = torch.meshgrid(torch.arange(4.0), torch.arange(6.0), indexing="ij")  # the 8 x 12 input's level
        self.grid = torch.stack((xv, yv), 2).expand(1, 2, 4, 6, 2) - 0.5  # constants, as Detect keeps them
        self.anchor_grid = torch.tensor([[10.0, 13.0], [16.0, 30.0]]).view(1, 2, 1, 1, 2).expand(1, 2, 4, 6, 2)

    def forward(self, x):
        y = self.head(torch.relu(self.conv(x)))
        n, _, h, w = y.shape
        y = y.view(n, 2, 6, h, w).permute(0, 1, 3, 4, 2).contiguous()
        xy, wh, conf = y.sigmoid().split((2, 2, 2), 4)
        y = torch.cat(((xy * 2 + self.grid) * 2.0, (wh * 2) ** 2 * self.anchor_grid, conf), 4)
        return y.view(n, 2 * h * w, 6)


class Yolov7Decode(Yolov5Decode):
    """The same level decoded as YOLOv7's IDetect exports it: xy * (2 stride) + stride (grid - 0.5), wh ^ 2 * (4
    anchor_grid)."""

    def forward(self, x):
        y = self.head(torch.relu(self.conv(x)))
        n, _, h, w = y.shape
        xy, wh, conf = y.view(n, 2, 6, h, w).permute(0, 1, 3, 4, 2).contiguous().sigmoid().split((2, 2, 2), 4)
        y = torch.cat((xy * 4.0 + 2.0 * self.grid, wh ** 2 * (4 * self.anchor_grid), conf), 4)
        return y.view(n, 2 * h * w, 6)


def write_yolov5_decode():
    torch.manual_seed(30)
    for kind, name in ((Yolov5Decode, "yolov5_decode"), (Yolov7Decode, "yolov7_decode")):
        torch.onnx.export(kind().eval(), torch.zeros(1, 3, 8, 12), str(OUT / f"{name}.onnx"), opset_version=13,
                          input_names=["x"], output_names=["output0"])


class Yolov8Head(nn.Module):
    """YOLOv8's Detect in inference mode on two levels (4 x 6 and 2 x 3 of the 8 x 12 input): boxes of 4 sides x 4
    bins and 2 classes per level, DFL and dist2bbox with constant cells and strides, class sigmoids."""

    def __init__(self):
        super().__init__()
        self.conv, self.down = nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 8, 3, 2, 1)
        self.boxes, self.classes = nn.ModuleList(nn.Conv2d(8, 16, 1) for _ in range(2)), nn.ModuleList(
            nn.Conv2d(8, 2, 1) for _ in range(2))
        self.dfl = nn.Conv2d(4, 1, 1, bias=False).requires_grad_(False)
        self.dfl.weight.data[:] = torch.arange(4.0).view(1, 4, 1, 1)
        centres = [torch.stack(torch.meshgrid(torch.arange(w) + 0.5, torch.arange(h) + 0.5, indexing="xy"), -1)
                   .view(-1, 2) for h, w in ((4, 6), (2, 3))]
        self.anchors = torch.cat(centres).transpose(0, 1).unsqueeze(0)
        self.strides = torch.tensor([2.0] * 24 + [4.0] * 6).view(1, 30)

    def forward(self, x):
        return self.detect(self.features(x))

    def features(self, x):
        fine = torch.relu(self.conv(x))
        return fine, torch.relu(self.down(fine))

    def detect(self, features):
        x_cat = torch.cat([torch.cat((b(f), c(f)), 1).view(-1, 18, p)
                           for f, b, c, p in zip(features, self.boxes, self.classes, (24, 6))], 2)
        box, cls = x_cat.split((16, 2), 1)
        lt, rb = self.dfl(box.view(-1, 4, 4, 30).transpose(2, 1).softmax(1)).view(-1, 4, 30).split((2, 2), 1)
        x1y1, x2y2 = self.anchors - lt, self.anchors + rb
        return torch.cat((torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * self.strides, cls.sigmoid()), 1)


def write_yolov8_head():
    torch.manual_seed(31)
    torch.onnx.export(Yolov8Head().eval(), torch.zeros(1, 3, 8, 12), str(OUT / "yolov8_head.onnx"), opset_version=13,
                      input_names=["x"], output_names=["output0"])


class Yolov8SegmentHead(Yolov8Head):
    """YOLOv8's Segment: the same Detect with 3 mask coefficients per position concatenated after the classes
    (output0 [N, 4 + 2 + 3, 30]) and prototypes from the finer level, a conv's SiLU (output1)."""

    def __init__(self):
        super().__init__()
        self.masks, self.proto = nn.ModuleList(nn.Conv2d(8, 3, 1) for _ in range(2)), nn.Conv2d(8, 3, 1)

    def forward(self, x):
        features = self.features(x)
        coefficients = torch.cat([m(f).view(-1, 3, p) for f, m, p in zip(features, self.masks, (24, 6))], 2)
        return torch.cat((self.detect(features), coefficients), 1), nn.functional.silu(self.proto(features[0]))


def write_yolov8_segment_head():
    torch.manual_seed(32)
    torch.onnx.export(Yolov8SegmentHead().eval(), torch.zeros(1, 3, 8, 12), str(OUT / "yolov8_segment_head.onnx"),
                      opset_version=13, input_names=["x"], output_names=["output0", "output1"])


class Yolov8PoseHead(Yolov8Head):
    """YOLOv8's Pose: the same Detect with 2 keypoints of (x, y, visibility) per position decoded after the classes
    ((2 v + cell) x stride, the visibility's sigmoid): output0 [N, 4 + 2 + 6, 30]."""

    def __init__(self):
        super().__init__()
        self.points = nn.ModuleList(nn.Conv2d(8, 6, 1) for _ in range(2))

    def forward(self, x):
        features = self.features(x)
        y = torch.cat([m(f).view(-1, 6, p) for f, m, p in zip(features, self.points, (24, 6))], 2).view(-1, 2, 3, 30)
        xy = (y[:, :, :2] * 2.0 + (self.anchors[0] - 0.5)) * self.strides
        return torch.cat((self.detect(features), torch.cat((xy, y[:, :, 2:3].sigmoid()), 2).view(-1, 6, 30)), 1)


def write_yolov8_pose_head():
    torch.manual_seed(33)
    torch.onnx.export(Yolov8PoseHead().eval(), torch.zeros(1, 3, 8, 12), str(OUT / "yolov8_pose_head.onnx"),
                      opset_version=13, input_names=["x"], output_names=["output0"])


class UpConvolutions(nn.Module):
    """A transposed conv (kernel 4, stride 2, padding 1: sub-pixel convs and a depth_to_space) and a PixelShuffle
    (DepthToSpace, mode CRD)."""

    def __init__(self):
        super().__init__()
        self.conv, self.up, self.fc = nn.Conv2d(3, 8, 3, 2, 1), nn.ConvTranspose2d(8, 4, 4, 2, 1), nn.Conv2d(4, 12, 1)

    def forward(self, x):
        return nn.functional.pixel_shuffle(self.fc(torch.relu(self.up(torch.relu(self.conv(x))))), 2)


def write_up_convolutions():
    torch.manual_seed(28)
    torch.onnx.export(UpConvolutions().eval(), torch.zeros(1, 3, 12, 10), str(OUT / "up_convolutions.onnx"),
                      opset_version=13, input_names=["x"], dynamic_axes={"x": {0: "n"}})


class GroupedUpConvolutions(nn.Module):
    """Transposed convs by groups: depthwise (kernel 4, stride 2, padding 1, as CenterNet's), then two groups
    (kernel 2, stride 2): grouped sub-pixel convs."""

    def __init__(self):
        super().__init__()
        self.conv, self.fc = nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(4, 5, 1)
        self.depthwise = nn.ConvTranspose2d(8, 8, 4, 2, 1, groups=8)
        self.grouped = nn.ConvTranspose2d(8, 4, 2, 2, groups=2)

    def forward(self, x):
        return self.fc(torch.relu(self.grouped(torch.relu(self.depthwise(torch.relu(self.conv(x)))))))


def write_grouped_up_convolutions():
    torch.manual_seed(29)
    torch.onnx.export(GroupedUpConvolutions().eval(), torch.zeros(1, 3, 12, 10),
                      str(OUT / "grouped_up_convolutions.onnx"), opset_version=13, input_names=["x"],
                      dynamic_axes={"x": {0: "n"}})


class SplitAttention(nn.Module):
    """ResNeSt's split attention as timm writes it: Reshape to [N, 2, C, H, W], ReduceSum, RadixSoftmax (Reshape,
    Transpose, Softmax over axis 1), the gate Mul of two split views, ReduceSum."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, groups=1)
        self.fc1, self.fc2 = nn.Conv2d(4, 4, 1), nn.Conv2d(4, 8, 1)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        n, rc, h, w = x.shape
        x = x.reshape((n, 2, rc // 2, h, w))
        gap = torch.relu(self.fc1(x.sum(dim=1).mean((2, 3), keepdim=True)))
        attention = self.fc2(gap).view(n, 1, 2, -1).transpose(1, 2)
        attention = torch.softmax(attention, 1).reshape(n, -1).view(n, -1, 1, 1)
        return self.fc((x * attention.reshape((n, 2, rc // 2, 1, 1))).sum(dim=1).mean((2, 3)))


class SelectiveKernel(nn.Module):
    """SKNet's selective kernel as timm writes it: two paths stacked (Unsqueeze, Concat over axis 1), ReduceSum,
    a conv's values viewed as [N, 2, C, 1, 1], Softmax over axis 1, the gate Mul, ReduceSum."""

    def __init__(self):
        super().__init__()
        self.paths = nn.ModuleList(nn.Conv2d(3, 4, 3, padding=d, dilation=d) for d in (1, 2))
        self.select = nn.Conv2d(4, 8, 1)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        x = torch.stack([torch.relu(path(x)) for path in self.paths], dim=1)
        attention = self.select(x.sum(1).mean((2, 3), keepdim=True))
        attention = torch.softmax(attention.view(attention.shape[0], 2, 4, 1, 1), dim=1)
        return self.fc(torch.sum(x * attention, dim=1).mean((2, 3)))


def write_split_attention():
    torch.manual_seed(19)
    torch.onnx.export(SplitAttention().eval(), torch.zeros(1, 3, 16, 16), str(OUT / "split_attention.onnx"),
                      opset_version=13, input_names=["x"])
    torch.onnx.export(SelectiveKernel().eval(), torch.zeros(1, 3, 16, 16), str(OUT / "selective_kernel.onnx"),
                      opset_version=13, input_names=["x"])


def write_dynamo_forms():
    """The same block as PyTorch's default exporter writes it at opset 20: Gelu, ReduceMean's axes an input,
    initializers only, node metadata_props (IR 10)."""
    torch.manual_seed(1)
    path = OUT / "dynamo_opset20.onnx"
    torch.onnx.export(ChannelsLast().eval(), torch.zeros(1, 3, 32, 32), str(path), opset_version=17, input_names=["x"])
    path.write_bytes(as_dynamo_writes(onnx.load(str(path)), 20).SerializeToString())


class Embedding(nn.Module):
    """ArcFace's iresnet head: x.float() (a Cast to FLOAT) before the Linear layer and before its BatchNorm1d."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 4, stride=4)
        self.fc = nn.Linear(4 * 8 * 8, 10)
        self.features = nn.BatchNorm1d(10)

    def forward(self, x):
        return self.features(self.fc(torch.flatten(self.conv(x), 1).float()).float())


def write_embedding():
    """The head as exported, and with the Linear layer's bias read through a Cast of that weight (torch folds its
    own)."""
    torch.manual_seed(5)
    model = Embedding().eval()
    with torch.no_grad():  # statistics that are not the identity, so no initializer is shared
        model.features.running_mean.uniform_(-0.5, 0.5)
        model.features.running_var.uniform_(0.5, 2.0)
        model.features.weight.uniform_(0.5, 1.5)
        model.features.bias.uniform_(-0.2, 0.2)
    path = OUT / "embedding.onnx"
    torch.onnx.export(model, torch.zeros(1, 3, 32, 32), str(path), opset_version=13, input_names=["x"])
    m = onnx.load(str(path))
    k, gemm = next((k, n) for k, n in enumerate(m.graph.node) if n.op_type == "Gemm")
    m.graph.node.insert(k, onnx.helper.make_node("Cast", [gemm.input[2]], ["bias_cast"], to=onnx.TensorProto.FLOAT))
    gemm.input[2] = "bias_cast"
    onnx.save(m, str(OUT / "embedding_cast_weight.onnx"))


def write_dynamic_size():
    """Height and width left dynamic, as dynamic_axes writes them: the fuzz target's dataset sizes them."""
    torch.manual_seed(8)
    torch.onnx.export(Tiny(False).eval(), torch.zeros(1, 3, 32, 32), str(OUT / "dynamic_size.onnx"), opset_version=13,
                      input_names=["x"], dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}})


def write_old_opset():
    """Tiny at opset 9 (BatchNormalization-9, Softmax-1): ONNX's version converter's input."""
    torch.manual_seed(10)
    torch.onnx.export(Tiny(True).eval(), torch.zeros(1, 3, 32, 32), str(OUT / "opset9.onnx"), opset_version=9,
                      training=torch.onnx.TrainingMode.PRESERVE, input_names=["x"])


def write_float16():
    """Tiny with float16 weights (raw_data and int32_data) and Casts at its float32 input and output."""
    from onnx import TensorProto
    from float_types import retyped

    torch.manual_seed(9)
    path = OUT / "float16.onnx"
    torch.onnx.export(Tiny(False).eval(), torch.zeros(1, 3, 32, 32), str(path), opset_version=13, input_names=["x"])
    retyped(path, TensorProto.FLOAT16, True, path, OUT / "float16_rounded.onnx")
    (OUT / "float16_rounded.onnx").unlink()


def write_classic_forms():
    """Caffe's and tf2onnx's forms, written by hand: LRN, a SAME average pool (end padding, not counted),
    a Sum of three values and a GlobalMaxPool."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(11)
    weights = {"w": rng.normal(size=(4, 3, 3, 3)), "b": rng.normal(size=4), "w1": rng.normal(size=(4, 4, 1, 1)),
               "fc": rng.normal(size=(10, 4)), "fcb": rng.normal(size=10)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("LRN", ["r"], ["n"], size=3, alpha=0.01, beta=0.75, bias=1.0),
             helper.make_node("AveragePool", ["n"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1]),
             helper.make_node("Conv", ["p", "w1"], ["q"]),
             helper.make_node("Sum", ["p", "q", "p"], ["s"]),
             helper.make_node("GlobalMaxPool", ["s"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "fc", "fcb"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "classic_forms", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                     [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
                              [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, str(OUT / "classic_forms.onnx"))


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    for by_view, training in [(True, torch.onnx.TrainingMode.PRESERVE), (False, torch.onnx.TrainingMode.EVAL)]:
        name = ("view_batch_norm" if by_view else "flatten_folded") + ".onnx"
        torch.onnx.export(Tiny(by_view).eval(), torch.zeros(1, 3, 32, 32), str(OUT / name), opset_version=13,
                          training=training, dynamic_axes={"x": {0: "n"}}, input_names=["x"])
    torch.onnx.export(Padded().eval(), torch.zeros(1, 3, 32, 32), str(OUT / "padded_sides.onnx"), opset_version=13,
                      input_names=["x"])
    write_channels_last()
    write_dynamo_forms()
    write_transform_input()
    write_external_data()
    write_nhwc()
    write_prelu()
    write_group_norms()
    write_rect_pools()
    write_one_row()
    write_one_row_separable()
    write_spatial_attention()
    write_expanded_gate()
    write_channel_sequence()
    write_pixels_to_channels()
    write_resized()
    write_global_response_norm()
    write_powers()
    write_coordinate_attention()
    write_global_context()
    write_bottleneck_attention()
    write_simam()
    write_segmenter()
    write_heads()
    write_detection_rows()
    write_yolov5_decode()
    write_yolov8_head()
    write_yolov8_segment_head()
    write_yolov8_pose_head()
    write_up_convolutions()
    write_grouped_up_convolutions()
    write_split_attention()
    write_embedding()
    write_dynamic_size()
    write_float16()
    write_old_opset()
    write_classic_forms()
    write_keras_flatten()


if __name__ == "__main__":
    main()
