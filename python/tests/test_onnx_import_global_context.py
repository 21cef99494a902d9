"""`octet import` of GCNet's global context block (Cao et al., 2019): a 1x1
conv makes a mask of one channel, a softmax over its positions weights each
channel's mean (x viewed as [N, 1, C, HW] times the weights as a column), and
a bottleneck (1x1 conv, LayerNorm, ReLU, 1x1 conv) of that context is added to
every pixel (channel_add) or gates them (channel_mul). In mmcv's ContextBlock
form (nn.LayerNorm([C, 1, 1]), both fusions) and timm's GlobalContext
(LayerNorm2d, fuse_add), and with torch.bmm of [N, C, HW] by [N, HW, 1].
PyTorch's logits are the reference; ONNX Runtime runs the file and octet's int8
export as well. Other softmaxes of the mask, and masks too large, are refused
naming the node."""

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import seeded  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import export_image_model, imported, int8_top1_agreement, randomise_batch_norms  # noqa
from unlabelled_import import refused, varied_inputs  # noqa: E402

nn = torch.nn
F = torch.nn.functional
IMAGE = (3, 32, 24)


class LayerNorm2d(nn.LayerNorm):
    """timm's: a LayerNorm over the channels of each pixel."""

    def forward(self, x):
        return F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias,
                            self.eps).permute(0, 3, 1, 2)


class ContextBlock(nn.Module):
    def __init__(self, channels, form):
        super().__init__()
        self.form = form
        middle = channels // 4
        self.conv_mask = nn.Conv2d(channels, 1, 1)
        norm = LayerNorm2d(middle) if form == "timm" else nn.LayerNorm([middle, 1, 1])
        self.add = nn.Sequential(nn.Conv2d(channels, middle, 1), norm, nn.ReLU(), nn.Conv2d(middle, channels, 1))
        self.mul = nn.Sequential(nn.Conv2d(channels, middle, 1), nn.LayerNorm([middle, 1, 1]), nn.ReLU(),
                                 nn.Conv2d(middle, channels, 1)) if form in ("mmcv", "mean") else None

    def context(self, x):
        if self.form == "mean":  # the baseline: mmcv's block pooling by a plain mean
            return x.mean((2, 3), keepdim=True)
        batch, channels, height, width = x.size()
        mask = self.conv_mask(x).view(batch, 1, height * width)
        if self.form == "bmm":
            weights = F.softmax(mask, dim=2).view(batch, height * width, 1)
            return torch.bmm(x.view(batch, channels, height * width), weights).view(batch, channels, 1, 1)
        weights = F.softmax(mask, dim=-1).unsqueeze(-1)
        return torch.matmul(x.view(batch, channels, height * width).unsqueeze(1), weights).view(batch, channels, 1, 1)

    def forward(self, x):
        context = self.context(x)
        out = x * torch.sigmoid(self.mul(context)) if self.mul is not None else x
        return out + self.add(context)


class Net(nn.Module):
    """Two strided conv blocks, each followed by a global context block, and a classifier."""

    def __init__(self, form):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 16, 3, 2, 1), nn.Conv2d(16, 32, 3, 2, 1)])
        self.bns = nn.ModuleList([nn.BatchNorm2d(16), nn.BatchNorm2d(32)])
        self.blocks = nn.ModuleList([ContextBlock(16, form), ContextBlock(32, form)])
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        for conv, bn, block in zip(self.convs, self.bns, self.blocks):
            x = block(torch.relu(bn(conv(x))))
        return self.fc(x.mean((2, 3)))


FORMS = ["mmcv", "timm", "bmm"]


@pytest.fixture(scope="module")
def images():
    return varied_inputs(44, 256, IMAGE)


def exported(path, seed, form):
    model = randomise_batch_norms(seeded(lambda: Net(form), seed, scale=1200))  # logits of a few units
    return export_image_model(model, path, IMAGE)


@pytest.mark.parametrize("form", FORMS)
def test_global_context_imports_and_matches_pytorch(tmp_path, octet_bin, images, form):
    model = exported(tmp_path / "m.onnx", 181, form)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert ops.count("Softmax") == 2 and ops.count("MatMul") == 2, ops
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "m.onnx", images)


@pytest.mark.parametrize("form", ["mmcv", "timm"])
def test_global_context_quantizes_follows_float_and_exports(tmp_path, octet_bin, images, form):
    """int8 follows float on random weights about as well as with a plain mean in place of the softmax's
    weights (int8_top1_agreement on these 256 images: mean 0.883, GCNet's pooling in mmcv's form 0.887, in
    timm's 0.938)."""
    exported(tmp_path / "mean.onnx", 182, "mean")
    imported(octet_bin, tmp_path / "mean.onnx", tmp_path / "mean.octet")
    baseline, _ = int8_top1_agreement(tmp_path, octet_bin, tmp_path / "mean.octet", images)
    exported(tmp_path / "m.onnx", 182, form)
    imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "m.octet", images, images,
                                          least_agreement=min(0.9, baseline - 0.05))  # 0.05: 2 sigma


def softmax_axis_set_to(model, axis):
    softmax = next(n for n in model.graph.node if n.op_type == "Softmax")
    next(a for a in softmax.attribute if a.name == "axis").i = axis
    return softmax.name


def test_a_softmax_over_another_axis_is_refused(tmp_path, octet_bin):
    exported(tmp_path / "m.onnx", 183, "timm")
    model = onnx.load(str(tmp_path / "m.onnx"))
    name = softmax_axis_set_to(model, 1)
    onnx.save(model, str(tmp_path / "m.onnx"))
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", name, "a softmax over axis 1 of GCNet's")


def test_masks_of_more_than_64_rows_import_where_their_factors_are_at_most_64(tmp_path, octet_bin):
    tall = (3, 256, 8)  # masks of 128 x 4 (the largest brought back by Upsamples of 64 and 2) and 64 x 2
    model = export_image_model(seeded(lambda: Net("mmcv"), 184, scale=1200), tmp_path / "m.onnx", tall)
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    inputs = varied_inputs(46, 8, tall)
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(inputs), model, tmp_path / "m.onnx", inputs)
    model = seeded(lambda: Net("timm"), 184, scale=1200)
    export_image_model(model, tmp_path / "prime.onnx", (3, 268, 8), dynamic_batch=False)  # 134 = 2 x 67 rows
    refused(octet_bin, tmp_path / "prime.onnx", tmp_path / "prime.octet", "MatMul", "a softmax over 134 x 4 positions",
            "prime factors are at most 64")
