"""`octet import` of ConvNeXt as torch.onnx.export writes it: blocks computed on
channels-last values (Transpose to [N, H, W, C], LayerNorm over the channels,
Linear layers as MatMul, GELU, a Transpose back, a layer scale). At opset 13
LayerNorm and GELU come as their steps (ReduceMean, Sub, Pow, ..., Erf); at 17
LayerNorm is LayerNormalization. The imported logits match PyTorch's, the
model quantizes and int8 follows float; what octet cannot compute on a
channels-last value is refused naming the node."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")
from torchvision.models.convnext import CNBlock, LayerNorm2d  # noqa: E402
from test_onnx_import import (SOURCE_DIR, assert_imports_as_pytorch_computes, export, int8_agreement,  # noqa: E402
                              refused)

nn = torch.nn


class TinyConvNeXt(nn.Module):
    """torchvision's ConvNeXt at CIFAR size: a patchify stem and its LayerNorm, two
    stages of one block each with a LayerNorm and 2x2 conv between them, and the
    head's pool, LayerNorm, flatten and Linear."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 2, stride=2), LayerNorm2d(16, eps=1e-6))
        self.stage1 = CNBlock(16, layer_scale=1.0, stochastic_depth_prob=0.0)
        self.down = nn.Sequential(LayerNorm2d(16, eps=1e-6), nn.Conv2d(16, 32, 2, stride=2))
        self.stage2 = CNBlock(32, layer_scale=1.0, stochastic_depth_prob=0.0)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), LayerNorm2d(32, eps=1e-6), nn.Flatten(1), nn.Linear(32, 10))

    def forward(self, x):
        return self.head(self.stage2(self.down(self.stage1(self.stem(x)))))


def tiny_convnext(seed):
    torch.manual_seed(seed)
    model = TinyConvNeXt()
    for m in model.modules():  # affines and layer scales that are not the identity
        if isinstance(m, nn.LayerNorm):
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.3, 0.3)
        if isinstance(m, CNBlock):
            m.layer_scale.data.uniform_(0.5, 1.5)
    model.head[3].weight.data *= 20
    return model.eval()


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(5).normal(size=(64, 3, 32, 32)).astype(np.float32)


@pytest.mark.parametrize("opset, layer_norm_ops", [(13, {"ReduceMean", "Pow", "Sqrt", "Erf"}),
                                                   (17, {"LayerNormalization", "Erf"})])
def test_convnext_imports_and_matches_pytorch(tmp_path, octet_bin, images, opset, layer_norm_ops):
    model = tiny_convnext(11)
    export(model, tmp_path / "convnext.onnx", opset=opset)
    types = {n.op_type for n in onnx.load(str(tmp_path / "convnext.onnx")).graph.node}
    assert layer_norm_ops | {"Transpose", "MatMul"} <= types, types
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "convnext.onnx", images)


class ChannelsFirstLayerNorm(nn.Module):
    """The ConvNeXt authors' LayerNorm of data_format "channels_first": its steps over axis 1 of the image."""

    def __init__(self, channels, eps=1e-6):
        super().__init__()
        self.weight, self.bias = nn.Parameter(torch.empty(channels).uniform_(0.5, 1.5)), nn.Parameter(
            torch.empty(channels).uniform_(-0.3, 0.3))
        self.eps = eps

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


def test_channels_first_layer_norm_imports_and_matches_pytorch(tmp_path, octet_bin, images):
    model = tiny_convnext(13)
    model.stem[1], model.down[0] = ChannelsFirstLayerNorm(16), ChannelsFirstLayerNorm(16)
    export(model, tmp_path / "convnext.onnx")
    means = [n for n in onnx.load(str(tmp_path / "convnext.onnx")).graph.node if n.op_type == "ReduceMean"]
    assert sum(list(next(a for a in n.attribute if a.name == "axes").ints) == [1] for n in means) == 4
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "convnext.onnx", images)


def test_convnext_quantizes_and_follows_float(tmp_path, octet_bin):
    agreement = int8_agreement(tmp_path, octet_bin, tiny_convnext(12))
    assert agreement >= 0.8, agreement  # random weights: int8 follows float on most images


class ConvOnChannelsLast(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(32, 8, 3)

    def forward(self, x):
        return self.conv(x.permute(0, 2, 3, 1)).mean((2, 3))  # rows as channels: a conv over the wrong axes


class MeanOfChannels(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        return self.fc((x - x.mean(-1, keepdim=True)).flatten(1)[:, :32])  # centred (a broadcast), not normalised


def test_what_octet_cannot_compute_on_channels_last_values_is_refused(tmp_path, octet_bin):
    export(ConvOnChannelsLast().eval(), tmp_path / "conv.onnx")
    refused(tmp_path, octet_bin, tmp_path / "conv.onnx", "(Conv, opset 13)", "reads a channels-last value")
    export(MeanOfChannels().eval(), tmp_path / "mean.onnx")
    refused(tmp_path, octet_bin, tmp_path / "mean.onnx", "(Sub, opset 13)", "subtracts computed values of one shape")


# Found by the fuzzer: the LayerNorm and GELU patterns read steps ahead of their
# own checks, and took input 1 of an Add or Sub that had one.
@pytest.mark.parametrize("step", ["/norm/Sub", "/norm/Add", "/Add", "/Mul"])
def test_a_pattern_step_with_too_few_inputs_is_refused(tmp_path, octet_bin, step):
    model = onnx.load(str(SOURCE_DIR / "tests" / "fuzz" / "corpus" / "onnx_import" / "channels_last.onnx"))
    node = next(n for n in model.graph.node if n.name == step)
    del node.input[1:]
    onnx.save(model, str(tmp_path / "m.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "m.onnx", "node '")


# Found by the fuzzer: the LayerNorm pattern read the output of its square step (a reader of the centred
# value) before any check of its outputs (2026-12-05); a constant Div folding into the layer computing its
# input counted that value's readers by their outputs, and GELU's Mul had none (2026-12-06).
@pytest.mark.parametrize("step", ["/norm/Pow", "/Mul"], ids=["layer_norm_square", "reader_beside_a_fold"])
def test_a_step_without_outputs_is_refused(tmp_path, octet_bin, step):
    model = onnx.load(str(SOURCE_DIR / "tests" / "fuzz" / "corpus" / "onnx_import" / "channels_last.onnx"))
    node = next(n for n in model.graph.node if n.name == step)
    del node.output[:]
    onnx.save(model, str(tmp_path / "m.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "m.onnx", "node '")
