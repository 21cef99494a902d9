"""`octet import` of a model that normalises its own input ((x - mean) / std:
Sub and Div of a constant per channel), gates with 1 - sigmoid (Sub from a
constant) and uses nn.PReLU's one slope, and of Tanh, ELU, Softplus and Mish:
the logits match PyTorch's and int8 follows float; PReLU's slope per channel (ArcFace's iresnet blocks) too,
as octet's PRelu, or as one leaky ReLU where the slopes are equal; a difference of two computed values, the
second's sign folded into the conv computing it, matches and quantizes too (PoolFormer's, where it cannot be folded:
test_onnx_import_poolformer.py), and one of rows that no linear layer alone computes is refused naming the node."""

import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
import octet  # noqa: E402
import ort_peer  # noqa: E402
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
    """iresnet's block (bn, conv, bn, PReLU(C), conv, bn, plus its input) after a PReLU(C) stem; a last PReLU(C)
    whose slopes are all torch's initial 0.25."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.stem_prelu = nn.PReLU(16)
        self.bn1, self.bn2, self.bn3 = nn.BatchNorm2d(16), nn.BatchNorm2d(16), nn.BatchNorm2d(16)
        self.conv1, self.conv2 = nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.prelu = nn.PReLU(16)
        self.last = nn.Conv2d(16, 12, 3, stride=2)
        self.same_slopes = nn.PReLU(12)
        self.fc = nn.Linear(12, 10)
        with torch.no_grad():
            for prelu in (self.stem_prelu, self.prelu):  # negative, small and above 1
                prelu.weight.copy_(torch.linspace(-0.3, 1.3, 16)[torch.randperm(16)])
            for bn in (self.bn1, self.bn2, self.bn3):
                bn.running_mean.uniform_(-0.5, 0.5)
                bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        x = self.stem_prelu(self.stem(x))
        x = x + self.bn3(self.conv2(self.prelu(self.bn2(self.conv1(self.bn1(x))))))
        return self.fc(self.same_slopes(self.last(x)).mean((2, 3)))


def per_channel(seed):
    return seeded(PerChannel, seed, 40)


def test_prelu_per_channel_imports_and_matches_pytorch(tmp_path, octet_bin, images):
    model = per_channel(65)
    export(model, tmp_path / "m.onnx")
    assert [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node].count("PRelu") == 3
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "m.onnx", images)
    summary = subprocess.run([octet_bin, "summary", "--checkpoint", str(tmp_path / "m.octet")], capture_output=True,
                             text=True, check=True).stdout
    ops = [line.split()[1] for line in summary.splitlines()[1:] if len(line.split()) > 2]
    assert ops.count("prelu") == 2 and ops.count("activation") == 1, summary  # equal slopes: one leaky ReLU


def test_prelu_per_channel_quantizes_int8_follows_float_and_exports(tmp_path, octet_bin):
    assert int8_agreement(tmp_path, octet_bin, per_channel(66)) >= 0.9
    # The quantized model's ONNX export (PRelu between DequantizeLinear and QuantizeLinear) runs in ONNX Runtime
    # as octet's int8 does.
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    subprocess.run([octet_bin, "export", "--quantized", str(tmp_path / "m.int8"), "--onnx", str(tmp_path / "q.onnx")],
                   capture_output=True, text=True, check=True)
    assert "PRelu" in [n.op_type for n in onnx.load(str(tmp_path / "q.onnx")).graph.node]
    images = np.random.default_rng(13).uniform(0, 1, size=(64, 3, 32, 32)).astype(np.float32)
    ours = octet.load_quantized(str(tmp_path / "m.int8")).predict(images, dequantize=True)
    theirs = ort_peer.run(tmp_path / "q.onnx", [images])[0]
    assert np.mean(ours.argmax(1) == theirs.argmax(1)) >= 0.95
    # ORT computes each PRelu in float where octet looks its levels up: 1.6% of the largest logit apart, 23% with
    # each channel's slopes taken from another channel.
    assert np.abs(ours - theirs).max() <= 0.05 * np.abs(ours).max(), (np.abs(ours - theirs).max(), np.abs(ours).max())


class Difference(nn.Module):
    def __init__(self, of_rows=False):
        super().__init__()
        self.a, self.b = nn.Conv2d(3, 8, 3), nn.Conv2d(3, 8, 3)
        self.fc = nn.Linear(8, 10)
        self.of_rows = of_rows

    def forward(self, x):
        if self.of_rows:
            y = self.a(x).mean((2, 3))
            return self.fc(y - torch.relu(y))
        return self.fc(torch.relu(self.a(x) - self.b(x)).mean((2, 3)))


def test_a_difference_of_computed_values_imports_and_quantizes(tmp_path, octet_bin, images):
    model = seeded(Difference, 67)
    export(model, tmp_path / "sub.onnx")
    assert "Sub" in [n.op_type for n in onnx.load(str(tmp_path / "sub.onnx")).graph.node]
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "sub.onnx", images)
    assert int8_agreement(tmp_path, octet_bin, seeded(Difference, 68)) >= 0.9


def test_a_difference_of_rows_that_no_linear_layer_negates_is_refused(tmp_path, octet_bin):
    export(Difference(of_rows=True).eval(), tmp_path / "sub.onnx")
    refused(tmp_path, octet_bin, tmp_path / "sub.onnx", "(Sub, opset 13)",
            "a difference of rows that no linear layer computing the second alone can negate")


class Activations(nn.Module):
    """Tanh, ELU, Softplus, Mish (x tanh(softplus(x)): torch exports it as those three steps below opset 18),
    SELU and CELU."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(c, 12, 3, padding=1) for c in (3, 12, 12, 12, 12, 12))
        self.fc = nn.Linear(12, 10)

    def forward(self, x):
        x = torch.tanh(self.convs[0](x))
        x = nn.functional.elu(self.convs[1](x), alpha=0.5)
        x = nn.functional.softplus(self.convs[2](x))
        x = nn.functional.mish(self.convs[3](x))
        x = nn.functional.selu(self.convs[4](x))
        x = nn.functional.celu(self.convs[5](x), alpha=0.7)
        return self.fc(x.mean((2, 3)))


def activations(seed):
    return seeded(Activations, seed, 40)


def test_tanh_elu_softplus_mish_selu_and_celu_import_and_match_pytorch(tmp_path, octet_bin, images):
    model = activations(63)
    export(model, tmp_path / "m.onnx")
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert ops.count("Softplus") == 2 and ops.count("Tanh") == 2 and {"Elu", "Selu", "Celu"} <= set(ops), ops
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "m.onnx", images)


def test_tanh_elu_softplus_mish_selu_and_celu_quantize_and_int8_follows_float(tmp_path, octet_bin):
    assert int8_agreement(tmp_path, octet_bin, activations(64)) >= 0.75  # 0.79: six tables' levels in a row


class LinearGate(nn.Module):
    """A squeeze-and-excitation gate as SENet's PyTorch code writes it: the pooled features viewed as rows, two
    Linear layers, the gate viewed back as (b, c, 1, 1) and multiplied in; `keras`: as Keras's
    GlobalAveragePooling2D, Reshape((1, 1, c)) and 1x1 Conv2Ds on a channels-last value."""

    def __init__(self, keras):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        layer = (lambda i, o: nn.Conv2d(i, o, 1)) if keras else nn.Linear
        self.down, self.up = layer(16, 4), layer(4, 16)
        self.fc = nn.Linear(16, 10)
        self.keras = keras

    def forward(self, x):
        x = torch.relu(self.conv(x))
        b, c = x.shape[0], x.shape[1]
        if self.keras:
            gate = x.permute(0, 2, 3, 1).mean((1, 2)).reshape(b, 1, 1, c).permute(0, 3, 1, 2)
            gate = torch.sigmoid(self.up(torch.relu(self.down(gate))))
        else:
            gate = torch.sigmoid(self.up(torch.relu(self.down(x.mean((2, 3)).view(b, c))))).view(b, c, 1, 1)
        return self.fc((x * gate).mean((2, 3)))


@pytest.mark.parametrize("keras", [False, True], ids=["senet_view", "keras_reshape"])
def test_rows_viewed_as_a_one_by_one_image_import_and_match_pytorch(tmp_path, octet_bin, images, keras):
    model = seeded(lambda: LinearGate(keras), 71)
    export(model, tmp_path / "gate.onnx")
    assert "Reshape" in [n.op_type for n in onnx.load(str(tmp_path / "gate.onnx")).graph.node]
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "gate.onnx", images)
    assert int8_agreement(tmp_path, octet_bin, None, tmp_path / "gate.onnx") >= 0.9
    # Its QDQ export (the rows made N x C x 1 x 1 again) runs in ONNX Runtime as octet's int8 runtime does.
    export_run = subprocess.run([octet_bin, "export", "--quantized", str(tmp_path / "m.int8"), "--onnx",
                                 str(tmp_path / "m.qdq.onnx")], capture_output=True, text=True)
    assert export_run.returncode == 0, export_run.stderr
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    int8 = octet.load_quantized(str(tmp_path / "m.int8")).predict(images[:2], dequantize=True)
    ort = np.concatenate([ort_peer.run(tmp_path / "m.qdq.onnx", [images[i:i + 1]])[0] for i in range(2)])
    assert np.abs(ort - int8).max() <= 1e-3 * np.abs(int8).max(), np.abs(ort - int8).max()


class RowsToImage(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        rows = torch.relu(self.conv(x)).mean((2, 3))
        return self.fc((rows.view(x.shape[0], 4, 2, 2) * 2).mean((2, 3)).repeat(1, 4))


def test_rows_reshaped_to_a_larger_image_are_refused(tmp_path, octet_bin):
    export(RowsToImage().eval(), tmp_path / "m.onnx")
    refused(tmp_path, octet_bin, tmp_path / "m.onnx", "(Reshape, opset 13)",
            "octet reshapes rows only to a 1 x 1 image")
