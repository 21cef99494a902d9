"""`octet import` of SimAM (Yang et al., ICML 2021), a parameter-free attention
of each pixel's energy against its channel's: d = (x - mean over H, W)^2, then
x * sigmoid(d / (4 (sum of d over H, W / (H W - 1) + lambda)) + 0.5), as its
authors write it (torch exports H W - 1 as shape arithmetic cast to float).
That is z^2 / 4 (H W / (H W - 1)) for z the instance norm of x: octet's
GroupNorm and square. And the same steps where they are not SimAM's (a
centred image read twice, its sum of squares added back): the mean subtracted
is a value per channel repeated over the pixels (negated first), the sum a
global average pool times H W. PyTorch's logits are the reference; ONNX
Runtime runs the file and octet's int8 export as well."""

import subprocess

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import seeded  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import export_image_model, imported, randomise_batch_norms, refused, varied_inputs  # noqa

nn = torch.nn
IMAGE = (3, 32, 24)


class SimAM(nn.Module):
    def __init__(self, e_lambda=1e-4):
        super().__init__()
        self.e_lambda = e_lambda

    def forward(self, x):
        _, _, h, w = x.size()
        n = w * h - 1
        x_minus_mu_square = (x - x.mean(dim=[2, 3], keepdim=True)).pow(2)
        y = x_minus_mu_square / (4 * (x_minus_mu_square.sum(dim=[2, 3], keepdim=True) / n + self.e_lambda)) + 0.5
        return x * torch.sigmoid(y)


class Centred(nn.Module):
    """SimAM's steps, not its pattern: the centred image read twice, x * sigmoid(it) plus its channels' sums of
    squares over H W - 1."""

    def forward(self, x):
        _, _, h, w = x.size()
        centred = x - x.mean(dim=[2, 3], keepdim=True)
        return x * torch.sigmoid(centred) + centred.pow(2).sum(dim=[2, 3], keepdim=True) / (w * h - 1)


class Net(nn.Module):
    """Two strided conv blocks with batch norms, SimAM (or its steps) after each, and a classifier."""

    def __init__(self, form="simam"):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 16, 3, 2, 1), nn.Conv2d(16, 32, 3, 2, 1)])
        self.bns = nn.ModuleList([nn.BatchNorm2d(16), nn.BatchNorm2d(32)])
        self.attention = SimAM() if form == "simam" else Centred()
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        for conv, bn in zip(self.convs, self.bns):
            x = self.attention(torch.relu(bn(conv(x))))
        return self.fc(x.mean((2, 3)))


@pytest.fixture(scope="module")
def images():
    return varied_inputs(50, 64, IMAGE)


def exported(path, seed, form="simam"):
    return export_image_model(randomise_batch_norms(seeded(lambda: Net(form), seed, scale=1200)), path, IMAGE)


@pytest.mark.parametrize("form", ["simam", "centred"])
def test_simam_imports_and_matches_pytorch(tmp_path, octet_bin, images, form):
    model = exported(tmp_path / "m.onnx", 201, form)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert ops.count("ReduceSum") == 2 and ops.count("Cast") == 2, ops
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    summary = subprocess.run([octet_bin, "summary", "--checkpoint", str(tmp_path / "m.octet")], capture_output=True,
                             text=True, check=True).stdout
    assert summary.count("group_norm") == (2 if form == "simam" else 0), summary
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "m.onnx", images)


@pytest.mark.parametrize("form", ["simam", "centred"])
def test_simam_quantizes_follows_float_and_exports(tmp_path, octet_bin, images, form):
    """SimAM as a GroupNorm: int8_top1_agreement 0.97 of 256 inputs (taken step by step, as before the pattern,
    0.70: the channels' 1 / (4 (variance + lambda)), spanning decades, shared one int8 reciprocal)."""
    exported(tmp_path / "m.onnx", 202, form)
    imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "m.octet", images, images)


def test_a_sum_over_the_channels_is_refused(tmp_path, octet_bin):
    exported(tmp_path / "m.onnx", 203)
    model = onnx.load(str(tmp_path / "m.onnx"))
    total = next(n for n in model.graph.node if n.op_type == "ReduceSum")
    model.graph.initializer.append(onnx.numpy_helper.from_array(torch.tensor([1]).numpy(), "channel_axis"))
    total.input[1] = "channel_axis"
    onnx.save(model, str(tmp_path / "m.onnx"))
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", total.name,
            "a sum other than over an image's height and width")
