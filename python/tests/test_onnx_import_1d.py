"""`octet import` of 1-D CNNs (raw audio, sensors, ECG): an input of N x C x L
is octet's image of C x 1 x L, a Conv1d a 1 x K conv, MaxPool1d and AvgPool1d
1 x K windows. The network is M5's shape (a strided wide first conv over a
waveform, batch norms, max pools) with an average pool, a residual add, a
per-channel constant and a global average pool, ending in torch.mean(x, -1)
or AdaptiveAvgPool1d and a squeeze; and MatchboxNet's shape (keyword
spotting over MFCCs: depthwise Conv1d, dilated too, each before a pointwise
one, residual branches). PyTorch's logits are the reference; ONNX Runtime
runs the file and octet's int8 export as well; `octet quantize` reads
calibration inputs of N x C x L. And a TCN's (dilated causal Conv1d whose
right padding a Slice removes, the classifier reading the last step)."""

import numpy as np
import octet
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import seeded  # noqa: E402
from torchscript_onnx import torchscript_export  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import octet_import, refused, varied_inputs  # noqa: E402

nn = torch.nn
WAVEFORM = (1, 1600)


class M5(nn.Module):
    def __init__(self, pooled_by_mean=True):
        super().__init__()
        self.conv1 = nn.Conv1d(1, 16, 40, stride=8, padding=16)
        self.bn1 = nn.BatchNorm1d(16)
        self.pool1 = nn.MaxPool1d(4)
        self.conv2 = nn.Conv1d(16, 24, 3, padding=1)
        self.bn2 = nn.BatchNorm1d(24)
        self.pool2 = nn.AvgPool1d(3, stride=2, padding=1)
        self.conv3 = nn.Conv1d(24, 24, 3, padding=1, bias=False)
        self.conv4 = nn.Conv1d(24, 32, 5, stride=2, padding=2, dilation=1)
        self.gain = nn.Parameter(torch.rand(32, 1) + 0.5)
        self.fc = nn.Linear(32, 10)
        self.pooled_by_mean = pooled_by_mean
        for bn in (self.bn1, self.bn2):  # statistics that make folding matter
            bn.running_mean.uniform_(-0.3, 0.3)
            bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        x = self.pool1(torch.relu(self.bn1(self.conv1(x))))
        x = self.pool2(torch.relu(self.bn2(self.conv2(x))))
        x = torch.relu(x + self.conv3(x))
        x = torch.relu(self.conv4(x)) * self.gain
        pooled = x.mean(-1) if self.pooled_by_mean else nn.functional.adaptive_avg_pool1d(x, 1).squeeze(-1)
        return self.fc(pooled)


@pytest.fixture(scope="module")
def waveforms():
    return varied_inputs(21, 64, WAVEFORM)


def exported(path, seed, **kwargs):
    model = seeded(lambda: M5(**kwargs), seed)
    torchscript_export(model, torch.zeros(1, *WAVEFORM), path, opset_version=13, input_names=["waveform"],
                       output_names=["logits"], dynamic_axes={"waveform": {0: "n"}, "logits": {0: "n"}})
    return model


@pytest.mark.parametrize("pooled_by_mean", [True, False], ids=["mean", "adaptive_pool_squeeze"])
def test_1d_cnn_imports_and_matches_pytorch_and_onnx_runtime(tmp_path, octet_bin, waveforms, pooled_by_mean):
    model = exported(tmp_path / "m5.onnx", 91, pooled_by_mean=pooled_by_mean)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m5.onnx")).graph.node]
    assert ops.count("Conv") == 4 and "MaxPool" in ops and "AveragePool" in ops, ops
    assert ("ReduceMean" if pooled_by_mean else "GlobalAveragePool") in ops, ops
    result = octet_import(octet_bin, tmp_path / "m5.onnx", tmp_path / "m5.octet")
    assert result.returncode == 0 and "1x1x1600" in result.stdout, (result.stdout, result.stderr)
    checkpoint = octet.load_checkpoint(str(tmp_path / "m5.octet"))
    got = checkpoint.predict(waveforms)  # N x C x L, as the model reads them
    assert np.array_equal(got, checkpoint.predict(waveforms[:, :, None, :]))  # octet's own N x C x 1 x L
    assert_matches_pytorch_and_onnx_runtime(got, model, tmp_path / "m5.onnx", waveforms)


def test_1d_cnn_quantizes_from_n_x_c_x_l_inputs_follows_float_and_exports(tmp_path, octet_bin, waveforms):
    exported(tmp_path / "m5.onnx", 92)
    assert octet_import(octet_bin, tmp_path / "m5.onnx", tmp_path / "m5.octet").returncode == 0
    # Calibrated from an N x C x L .npy; the export reads octet's images, N x C x 1 x L.
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "m5.octet", waveforms,
                                          waveforms[:, :, None, :])


class SeparableConv(nn.Sequential):
    """A time-channel separable conv as MatchboxNet's: depthwise Conv1d (padded to keep the length), pointwise
    Conv1d, batch norm."""

    def __init__(self, channels, out, kernel, dilation=1):
        padding = dilation * (kernel - 1) // 2
        super().__init__(nn.Conv1d(channels, channels, kernel, padding=padding, dilation=dilation, groups=channels,
                                   bias=False),
                         nn.Conv1d(channels, out, 1, bias=False), nn.BatchNorm1d(out))
        self[2].running_mean.uniform_(-0.3, 0.3)
        self[2].running_var.uniform_(0.5, 2.0)


class MatchboxNet(nn.Module):
    """MatchboxNet-3x1x64's shape at a smaller width: a prologue, blocks of separable convs with a pointwise residual
    branch, a dilated epilogue, the mean over time and a linear classifier of 12 keywords."""

    def __init__(self):
        super().__init__()
        self.prologue = SeparableConv(MFCC[0], 64, 11)
        self.blocks = nn.ModuleList([SeparableConv(64, 32, 13), SeparableConv(32, 32, 15), SeparableConv(32, 32, 17)])
        self.residuals = nn.ModuleList([nn.Conv1d(64, 32, 1), nn.Conv1d(32, 32, 1), nn.Conv1d(32, 32, 1)])
        self.epilogue = SeparableConv(32, 64, 29, dilation=2)
        self.fc = nn.Linear(64, 12)

    def forward(self, x):
        x = torch.relu(self.prologue(x))
        for block, residual in zip(self.blocks, self.residuals):
            x = torch.relu(block(x) + residual(x))
        return self.fc(torch.relu(self.epilogue(x)).mean(-1))


MFCC = (64, 101)  # 64 coefficients, 101 frames of a second of speech


@pytest.fixture(scope="module")
def mfccs():
    return varied_inputs(22, 64, MFCC)


def exported_matchboxnet(path, seed):
    model = seeded(MatchboxNet, seed)
    torchscript_export(model, torch.zeros(1, *MFCC), path, opset_version=13, input_names=["mfcc"],
                       output_names=["logits"], dynamic_axes={"mfcc": {0: "n"}, "logits": {0: "n"}})
    return model


def assert_imports_as_pytorch_computes(octet_bin, model, onnx_path, inputs):
    """The 1-D model imports as images of C x 1 x L and its float logits of N x C x L `inputs` match PyTorch's and
    ONNX Runtime's."""
    result = octet_import(octet_bin, onnx_path, onnx_path.with_suffix(".octet"))
    image = f"{inputs.shape[1]}x1x{inputs.shape[2]}"
    assert result.returncode == 0 and image in result.stdout, (result.stdout, result.stderr)
    got = octet.load_checkpoint(str(onnx_path.with_suffix(".octet"))).predict(inputs)
    assert_matches_pytorch_and_onnx_runtime(got, model, onnx_path, inputs)


def assert_quantizes_and_exports(tmp_path, octet_bin, onnx_path, inputs):
    """Imported, quantized from N x C x L `inputs`, its int8 model follows float and its export runs in ONNX Runtime
    (on octet's images, N x C x 1 x L)."""
    assert octet_import(octet_bin, onnx_path, onnx_path.with_suffix(".octet")).returncode == 0
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, onnx_path.with_suffix(".octet"), inputs,
                                          inputs[:, :, None, :])


def test_depthwise_conv1d_imports_and_matches_pytorch_and_onnx_runtime(tmp_path, octet_bin, mfccs):
    model = exported_matchboxnet(tmp_path / "matchbox.onnx", 96)
    convs = [n for n in onnx.load(str(tmp_path / "matchbox.onnx")).graph.node if n.op_type == "Conv"]
    groups = [next((a.i for a in n.attribute if a.name == "group"), 1) for n in convs]
    assert sorted(groups) == [1] * 8 + [32] * 3 + [64] * 2, groups
    assert_imports_as_pytorch_computes(octet_bin, model, tmp_path / "matchbox.onnx", mfccs)


def test_depthwise_conv1d_quantizes_follows_float_and_exports(tmp_path, octet_bin, mfccs):
    exported_matchboxnet(tmp_path / "matchbox.onnx", 97)
    assert_quantizes_and_exports(tmp_path, octet_bin, tmp_path / "matchbox.onnx", mfccs)


class Chomp1d(nn.Module):
    """The causal conv's right padding removed (x[:, :, :-size]: a Slice of the length)."""

    def __init__(self, size):
        super().__init__()
        self.size = size

    def forward(self, x):
        return x[:, :, :-self.size].contiguous()


class TemporalBlock(nn.Module):
    """Two dilated causal Conv1d (padded both ends, the right end's padding chomped), their ReLUs, a residual of the
    input or of its 1x1 conv."""

    def __init__(self, n_in, n_out, kernel, dilation):
        super().__init__()
        padding = (kernel - 1) * dilation
        self.net = nn.Sequential(nn.Conv1d(n_in, n_out, kernel, padding=padding, dilation=dilation), Chomp1d(padding),
                                 nn.ReLU(), nn.Conv1d(n_out, n_out, kernel, padding=padding, dilation=dilation),
                                 Chomp1d(padding), nn.ReLU())
        self.downsample = nn.Conv1d(n_in, n_out, 1) if n_in != n_out else None

    def forward(self, x):
        return torch.relu(self.net(x) + (x if self.downsample is None else self.downsample(x)))


class TCN(nn.Module):
    """locuslab's temporal convolutional network (Bai, Kolter and Koltun 2018) as on sequential MNIST, shorter:
    temporal blocks of dilation 1 to 8, the linear classifier reading the last step (y[:, :, -1], a Gather)."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(*[TemporalBlock(1 if d == 1 else 16, 16, 7, d) for d in (1, 2, 4, 8)])
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(self.blocks(x)[:, :, -1])


SEQUENCE = (1, 256)


def exported_tcn(path, seed):
    model = seeded(TCN, seed)
    torchscript_export(model, torch.zeros(1, *SEQUENCE), path, opset_version=13, input_names=["sequence"],
                       output_names=["logits"], dynamic_axes={"sequence": {0: "n"}, "logits": {0: "n"}})
    return model


@pytest.fixture(scope="module")
def sequences():
    return varied_inputs(23, 64, SEQUENCE)


def test_a_tcn_imports_and_matches_pytorch_and_onnx_runtime(tmp_path, octet_bin, sequences):
    model = exported_tcn(tmp_path / "tcn.onnx", 98)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "tcn.onnx")).graph.node]
    assert ops.count("Slice") == 8 and ops.count("Gather") == 1, ops
    assert_imports_as_pytorch_computes(octet_bin, model, tmp_path / "tcn.onnx", sequences)


def test_a_tcn_quantizes_follows_float_and_exports(tmp_path, octet_bin, sequences):
    exported_tcn(tmp_path / "tcn.onnx", 99)
    assert_quantizes_and_exports(tmp_path, octet_bin, tmp_path / "tcn.onnx", sequences)


@pytest.mark.parametrize("cut, fragment", [(lambda x: x[1:], "a slice other than of channels (axis 1) with step 1"),
                                           (lambda x: x[:, :, 300:], "an empty slice"),
                                           (lambda x: torch.cat([x[:, ::2]] * 2, 1),
                                            "of channels (axis 1) with step 1, or of height")],
                         ids=["batch", "empty", "strided_channels"])
def test_slices_octet_cannot_take_are_refused_naming_them(tmp_path, octet_bin, cut, fragment):
    class Cut(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(1, 8, 5)
            self.fc = nn.Linear(8, 10)

        def forward(self, x):
            return self.fc(cut(torch.relu(self.conv(x))).mean(-1))

    torchscript_export(seeded(Cut, 100), torch.zeros(2, *SEQUENCE), tmp_path / "c.onnx", opset_version=13,
                       input_names=["sequence"])
    slices = [n.name for n in onnx.load(str(tmp_path / "c.onnx")).graph.node if n.op_type == "Slice"]
    assert len(slices) == 1, slices
    refused(octet_bin, tmp_path / "c.onnx", tmp_path / "c.octet", slices[0], fragment)


def test_a_dynamic_length_is_refused(tmp_path, octet_bin):
    model = seeded(M5, 94)
    torchscript_export(model, torch.zeros(1, *WAVEFORM), tmp_path / "m.onnx", opset_version=13,
                       input_names=["waveform"], dynamic_axes={"waveform": {0: "n", 2: "samples"}})
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", "its length (dimension 2) is dynamic")


class FrontEndThenImage(nn.Module):
    """A 1-D front end over the waveform, then its channels viewed as an image of one row (x.view(n, c, 1, l)) for
    2-D convs and pools: the view keeps octet's values as they are."""

    def __init__(self):
        super().__init__()
        self.front = nn.Conv1d(1, 8, 16, stride=8, padding=4)
        self.conv = nn.Conv2d(8, 16, (1, 3), padding=(0, 1))
        self.pool = nn.MaxPool2d((1, 2))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.front(x)).view(x.size(0), 8, 1, 200)
        return self.fc(self.pool(torch.relu(self.conv(x))).mean((2, 3)))


def test_a_1d_value_viewed_as_an_image_of_one_row_goes_on_in_2d(tmp_path, octet_bin, waveforms):
    model = seeded(FrontEndThenImage, 95)
    torchscript_export(model, torch.zeros(1, *WAVEFORM), tmp_path / "v.onnx", opset_version=13,
                       input_names=["waveform"], dynamic_axes={"waveform": {0: "n"}})
    assert "Reshape" in [n.op_type for n in onnx.load(str(tmp_path / "v.onnx")).graph.node]
    result = octet_import(octet_bin, tmp_path / "v.onnx", tmp_path / "v.octet")
    assert result.returncode == 0, result.stderr
    got = octet.load_checkpoint(str(tmp_path / "v.octet")).predict(waveforms)
    assert_matches_pytorch_and_onnx_runtime(got, model, tmp_path / "v.onnx", waveforms)
