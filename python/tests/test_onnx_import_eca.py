"""`octet import` of ECA-Net's channel attention (Wang et al. 2020): each
residual block's output pooled to C values, read as a sequence of one channel
and length C, convolved along the channels by a 1-D kernel of k taps, its
sigmoid gating each channel. Both ways it is written: the authors' reference
(y.squeeze(-1).transpose(-1, -2), Conv1d, .transpose(-1, -2).unsqueeze(-1))
and timm's EcaModule (x.mean((2, 3)).view(N, 1, -1), Conv1d, .view(N, -1, 1,
1), x * y.expand_as(x)). PyTorch's logits are the reference; ONNX Runtime runs
the file and octet's int8 export as well."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from residual_blocks import AttentionBlock  # noqa: E402
from test_onnx_import import seeded  # noqa: E402
from torchscript_onnx import torchscript_export  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import imported, refused, varied_inputs  # noqa: E402

nn = torch.nn
IMAGE = (3, 32, 32)


class Eca(nn.Module):
    def __init__(self, taps, timm_form):
        super().__init__()
        self.timm_form = timm_form
        self.conv = nn.Conv1d(1, 1, taps, padding=(taps - 1) // 2, bias=False)
        self.conv.weight.data *= 3  # gates away from one half: the conv's taps must matter

    def forward(self, x):
        if self.timm_form:
            y = self.conv(x.mean((2, 3)).view(x.shape[0], 1, -1))
            return x * torch.sigmoid(y).view(x.shape[0], -1, 1, 1).expand_as(x)
        y = nn.functional.adaptive_avg_pool2d(x, 1)
        y = self.conv(y.squeeze(-1).transpose(-1, -2)).transpose(-1, -2).unsqueeze(-1)
        return x * torch.sigmoid(y).expand_as(x)


class EcaResNet(nn.Module):
    """ECA's kernel size grows with the channels (k = |log2(C) / 2 + 1/2| made odd): 3 at 16 and 32, 5 at 64."""

    def __init__(self, timm_form):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        shapes = ((16, 16, 1, 3), (16, 32, 2, 3), (32, 64, 2, 5))
        self.blocks = nn.Sequential(*[AttentionBlock(n_in, n_out, stride, Eca(taps, timm_form))
                                      for n_in, n_out, stride, taps in shapes])
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


@pytest.fixture(scope="module")
def images():
    return varied_inputs(25, 64, IMAGE)


def exported(path, seed, timm_form):
    model = seeded(lambda: EcaResNet(timm_form), seed)
    torchscript_export(model, torch.zeros(1, *IMAGE), path, opset_version=13, input_names=["image"],
                       output_names=["logits"], dynamic_axes={"image": {0: "n"}, "logits": {0: "n"}})
    return model


def sequence_convs(path):
    return [n for n in onnx.load(str(path)).graph.node
            if n.op_type == "Conv" and len(next(a for a in n.attribute if a.name == "kernel_shape").ints) == 1]


@pytest.mark.parametrize("timm_form", [False, True], ids=["reference", "timm"])
def test_eca_resnet_imports_and_matches_pytorch_and_onnx_runtime(tmp_path, octet_bin, images, timm_form):
    model = exported(tmp_path / "eca.onnx", 111, timm_form)
    assert len(sequence_convs(tmp_path / "eca.onnx")) == 3
    checkpoint = imported(octet_bin, tmp_path / "eca.onnx", tmp_path / "eca.octet")
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "eca.onnx", images)


@pytest.mark.parametrize("timm_form", [False, True], ids=["reference", "timm"])
def test_eca_resnet_quantizes_follows_float_and_exports(tmp_path, octet_bin, images, timm_form):
    exported(tmp_path / "eca.onnx", 112, timm_form)
    imported(octet_bin, tmp_path / "eca.onnx", tmp_path / "eca.octet")
    # A gate is one level per channel: where ORT's float conv rounds a level the other way before it (1 in
    # 16,384 at the stem), a gate a level apart scales a whole channel (measured: 2e-3 of the largest logit).
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "eca.octet", images, images,
                                          tolerance=5e-3)


def test_a_sequence_of_channels_read_otherwise_is_refused_naming_the_node(tmp_path, octet_bin):
    exported(tmp_path / "eca.onnx", 113, timm_form=True)
    model = onnx.load(str(tmp_path / "eca.onnx"))
    conv = next(n for n in model.graph.node if n.name == sequence_convs(tmp_path / "eca.onnx")[0].name)
    conv.op_type = "Softsign"
    del conv.input[1:]
    del conv.attribute[:]
    onnx.save(model, str(tmp_path / "eca.onnx"))
    refused(octet_bin, tmp_path / "eca.onnx", tmp_path / "eca.octet", conv.name, "(Softsign, opset 13)",
            "viewed as a sequence ([N, 1, C], ECA-Net's)")


def test_a_conv_of_more_than_one_channel_along_the_sequence_is_refused(tmp_path, octet_bin):
    exported(tmp_path / "eca.onnx", 114, timm_form=False)
    model = onnx.load(str(tmp_path / "eca.onnx"))
    conv = sequence_convs(tmp_path / "eca.onnx")[0]
    weight = next(t for t in model.graph.initializer if t.name == conv.input[1])
    weight.CopyFrom(onnx.numpy_helper.from_array(np.ones((2, 1, 3), np.float32), weight.name))
    onnx.save(model, str(tmp_path / "eca.onnx"))
    refused(octet_bin, tmp_path / "eca.onnx", tmp_path / "eca.octet", conv.name, "a weight of shape [2, 1, 3]",
            "one channel in and out")
