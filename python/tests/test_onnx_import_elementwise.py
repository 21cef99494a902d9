"""`octet import` of a model that normalises its own input ((x - mean) / std:
Sub and Div of a constant per channel), gates with 1 - sigmoid (Sub from a
constant) and uses nn.PReLU's one slope, and of Tanh, ELU, Softplus and Mish:
the logits match PyTorch's and int8 follows float; a per-channel PReLU and a difference of two computed values
are refused naming the node."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import assert_imports_as_pytorch_computes, export, int8_agreement, refused, seeded  # noqa: E402

nn = torch.nn


class Normalising(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.4914, 0.4822, 0.4465]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.2470, 0.2435, 0.2616]).view(1, 3, 1, 1))
        self.conv = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.prelu = nn.PReLU(init=0.2)
        self.gate = nn.Conv2d(16, 16, 1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.prelu(self.conv((x - self.mean) / self.std))
        x = x * (1.0 - torch.sigmoid(self.gate(x)))
        return self.fc(x.mean((2, 3)))


def normalising(seed):
    return seeded(Normalising, seed, 40)


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(12).uniform(0, 1, size=(32, 3, 32, 32)).astype(np.float32)


def test_sub_div_and_prelu_import_and_match_pytorch(tmp_path, octet_bin, images):
    model = normalising(61)
    export(model, tmp_path / "m.onnx")
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert ops.count("Sub") == 2 and "PRelu" in ops and "Div" in ops, ops
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "m.onnx", images)


def test_sub_div_and_prelu_quantize_and_int8_follows_float(tmp_path, octet_bin):
    assert int8_agreement(tmp_path, octet_bin, normalising(62)) >= 0.9


class PerChannel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.prelu = nn.PReLU(8)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(self.prelu(self.conv(x)).mean((2, 3)))


class Difference(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Conv2d(3, 8, 3), nn.Conv2d(3, 8, 3)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc((self.a(x) - self.b(x)).mean((2, 3)))


def test_a_prelu_per_channel_and_a_difference_of_computed_values_are_refused(tmp_path, octet_bin):
    export(PerChannel().eval(), tmp_path / "prelu.onnx")
    refused(tmp_path, octet_bin, tmp_path / "prelu.onnx", "(PRelu, opset 13)", "a slope per channel")
    export(Difference().eval(), tmp_path / "sub.onnx")
    refused(tmp_path, octet_bin, tmp_path / "sub.onnx", "(Sub, opset 13)", "a difference of two computed values")


class Activations(nn.Module):
    """Tanh, ELU, Softplus and Mish (x tanh(softplus(x)): torch exports it as those three steps below opset 18)."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(c, 12, 3, padding=1) for c in (3, 12, 12, 12))
        self.fc = nn.Linear(12, 10)

    def forward(self, x):
        x = torch.tanh(self.convs[0](x))
        x = nn.functional.elu(self.convs[1](x), alpha=0.5)
        x = nn.functional.softplus(self.convs[2](x))
        x = nn.functional.mish(self.convs[3](x))
        return self.fc(x.mean((2, 3)))


def activations(seed):
    return seeded(Activations, seed, 40)


def test_tanh_elu_softplus_and_mish_import_and_match_pytorch(tmp_path, octet_bin, images):
    model = activations(63)
    export(model, tmp_path / "m.onnx")
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert ops.count("Softplus") == 2 and ops.count("Tanh") == 2 and "Elu" in ops, ops
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "m.onnx", images)


def test_tanh_elu_softplus_and_mish_quantize_and_int8_follows_float(tmp_path, octet_bin):
    assert int8_agreement(tmp_path, octet_bin, activations(64)) >= 0.9
