"""`octet import` of ConvNeXt-V2: its blocks' Global Response Normalization
(GRN: x_g = ||x|| over height and width per channel, n = x_g / (x_g's mean over
the channels + eps), y = gamma (x n) + beta + x), as its authors write it on
channels-last values (torch.norm(x, p=2, dim=(1, 2)), a ReduceL2 in ONNX) and
as timm writes it on channels-first ones (its conv MLP). PyTorch's logits are
the reference; ONNX Runtime runs the file and octet's int8 export as well. A
Div by a computed value of another shape is refused naming the node."""

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import seeded  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import export_image_model, imported, refused, varied_inputs  # noqa: E402

nn = torch.nn
IMAGE = (3, 32, 32)


class GRN(nn.Module):
    """ConvNeXt-V2's, channels-last (its authors'), or channels-first (timm's GlobalResponseNorm of a conv MLP)."""

    def __init__(self, dim, channels_last):
        super().__init__()
        shape = (1, 1, 1, dim) if channels_last else (1, dim, 1, 1)
        self.spatial, self.channel = ((1, 2), -1) if channels_last else ((2, 3), 1)
        self.gamma = nn.Parameter(torch.empty(shape).uniform_(0.2, 1.0))
        self.beta = nn.Parameter(torch.empty(shape).uniform_(-0.2, 0.2))

    def forward(self, x):
        gx = torch.norm(x, p=2, dim=self.spatial, keepdim=True)
        nx = gx / (gx.mean(dim=self.channel, keepdim=True) + 1e-6)
        return self.gamma * (x * nx) + self.beta + x


class Block(nn.Module):
    """A ConvNeXt-V2 block: 7x7 depthwise conv, LayerNorm, pointwise up 4x, GELU, GRN, pointwise down, residual;
    the pointwise layers Linear on channels-last values, or 1x1 convs (timm's conv_mlp)."""

    def __init__(self, dim, channels_last):
        super().__init__()
        self.channels_last = channels_last
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6) if channels_last else nn.GroupNorm(1, dim)
        pointwise = (lambda a, b: nn.Linear(a, b)) if channels_last else (lambda a, b: nn.Conv2d(a, b, 1))
        self.up, self.act, self.grn, self.down = pointwise(dim, 4 * dim), nn.GELU(), GRN(4 * dim, channels_last), \
            pointwise(4 * dim, dim)

    def forward(self, x):
        y = self.dw(x)
        if self.channels_last:
            y = y.permute(0, 2, 3, 1)
        y = self.down(self.grn(self.act(self.up(self.norm(y)))))
        return x + (y.permute(0, 3, 1, 2) if self.channels_last else y)


class ConvNeXtV2(nn.Module):
    def __init__(self, channels_last):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 4, 4)
        self.blocks = nn.Sequential(Block(16, channels_last), nn.Conv2d(16, 32, 2, 2), Block(32, channels_last))
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


FORMS = {"channels_last": True, "channels_first": False}


@pytest.fixture(scope="module")
def images():
    return varied_inputs(37, 64, IMAGE)


def exported(path, seed, form):
    return export_image_model(seeded(lambda: ConvNeXtV2(FORMS[form]), seed, scale=60), path, IMAGE)


@pytest.mark.parametrize("form", FORMS)
def test_grn_imports_and_matches_pytorch_and_onnx_runtime(tmp_path, octet_bin, images, form):
    model = exported(tmp_path / "m.onnx", 151, form)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert ops.count("ReduceL2") == 2 and ops.count("Div") >= 2, ops
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "m.onnx", images)


@pytest.mark.parametrize("form", FORMS)
def test_grn_quantizes_follows_float_and_exports(tmp_path, octet_bin, images, form):
    exported(tmp_path / "m.onnx", 152, form)
    imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "m.octet", images, images)


def test_a_division_by_a_computed_value_of_another_shape_is_refused(tmp_path, octet_bin):
    exported(tmp_path / "m.onnx", 153, "channels_first")
    model = onnx.load(str(tmp_path / "m.onnx"))
    div = next(n for n in model.graph.node if n.op_type == "Div" and any(
        m.output[0] == n.input[1] and m.op_type == "Add" for m in model.graph.node))
    norm = next(n for n in model.graph.node if n.op_type == "ReduceL2")
    div.input[1] = norm.input[0]  # x_g / x: a full image as the divisor
    onnx.save(model, str(tmp_path / "m.onnx"))
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", div.name, "octet divides by one value per channel")
