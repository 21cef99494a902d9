"""`octet import` of Coordinate Attention (Hou et al., CVPR 2021), a mobile
network's attention block: x pooled along each direction, the row of width
means transposed into a column, both concatenated over the height, a 1x1 conv,
batch norm and h_swish over them, split back, and each direction's gate (a 1x1
conv and a sigmoid) multiplying x, broadcast over the other direction. In its
authors' form (nn.AdaptiveAvgPool2d((None, 1)) and ((1, None)), permute, the
h_swish as Add, Clip, Div, Mul; torch exports it with a fixed batch only) and
timm's (x.mean(3, keepdim=True), transpose(-1, -2), torch.split), on images
taller than wide. PyTorch's logits are the reference; ONNX Runtime runs the
file and octet's int8 export as well. What else reads the concat is refused
naming the node."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import seeded  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import export_image_model, imported, randomise_batch_norms, refused, varied_inputs  # noqa: E402

nn = torch.nn
IMAGE = (3, 32, 24)


class HSwish(nn.Module):
    def forward(self, x):
        return x * (torch.clamp(x + 3, 0, 6) / 6)


class CoordAtt(nn.Module):
    def __init__(self, channels, form, reduction=4):
        super().__init__()
        self.form = form
        middle = max(8, channels // reduction)
        self.pool_h, self.pool_w = nn.AdaptiveAvgPool2d((None, 1)), nn.AdaptiveAvgPool2d((1, None))
        self.conv1, self.bn1, self.act = nn.Conv2d(channels, middle, 1), nn.BatchNorm2d(middle), HSwish()
        self.conv_h, self.conv_w = nn.Conv2d(middle, channels, 1), nn.Conv2d(middle, channels, 1)

    def forward(self, x):
        _, _, h, w = x.size()
        if self.form == "authors":
            x_h, x_w = self.pool_h(x), self.pool_w(x).permute(0, 1, 3, 2)
        else:
            x_h, x_w = x.mean(3, keepdim=True), x.mean(2, keepdim=True).transpose(-1, -2)
        y = self.act(self.bn1(self.conv1(torch.cat([x_h, x_w], dim=2))))
        x_h, x_w = torch.split(y, [h, w], dim=2)
        a_h, a_w = self.conv_h(x_h).sigmoid(), self.conv_w(x_w.transpose(-1, -2)).sigmoid()
        return x * a_w * a_h


class Net(nn.Module):
    """Two strided conv blocks, each followed by Coordinate Attention, and a classifier."""

    def __init__(self, form):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 16, 3, 2, 1), nn.Conv2d(16, 32, 3, 2, 1)])
        self.attention = nn.ModuleList([CoordAtt(16, form), CoordAtt(32, form)])
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        for conv, attention in zip(self.convs, self.attention):
            x = attention(torch.relu(conv(x)))
        return self.fc(x.mean((2, 3)))


FORMS = ["authors", "timm"]


@pytest.fixture(scope="module")
def images():
    return varied_inputs(43, 64, IMAGE)


def exported(path, seed, form):
    model = randomise_batch_norms(seeded(lambda: Net(form), seed, scale=1200))  # logits of a few units
    return export_image_model(model, path, IMAGE, dynamic_batch=form != "authors")


@pytest.mark.parametrize("form", FORMS)
def test_coordinate_attention_imports_and_matches_pytorch(tmp_path, octet_bin, images, form):
    model = exported(tmp_path / "m.onnx", 171, form)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert ops.count("Transpose") == 4 and ops.count("Concat") == 2, ops
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    if form == "timm":
        assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "m.onnx", images)
        return
    with torch.no_grad():  # the authors' form exports with a batch of 1 only: PyTorch alone
        expected = model(torch.from_numpy(images)).numpy()
    assert np.abs(checkpoint.predict(images) - expected).max() <= 1e-4 * np.abs(expected).max()


def test_coordinate_attention_quantizes_follows_float_and_exports(tmp_path, octet_bin, images):
    exported(tmp_path / "m.onnx", 172, "timm")
    imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "m.octet", images, images)


def test_coordinate_attention_at_mobilenets_first_stage_size_imports(tmp_path, octet_bin):
    """A 224 x 224 image's first stride-2 stage is 112 x 112: means over 112 pixels (pools of whole rows) and gates
    repeated over 112 (Upsamples of 56 and 2), then 56 x 56."""
    image = (3, 224, 224)
    model = randomise_batch_norms(seeded(lambda: Net("timm"), 174, scale=1200))
    export_image_model(model, tmp_path / "m.onnx", image)
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    inputs = varied_inputs(47, 4, image)
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(inputs), model, tmp_path / "m.onnx", inputs)


def test_another_reader_of_the_concat_is_refused(tmp_path, octet_bin):
    exported(tmp_path / "m.onnx", 173, "timm")
    model = onnx.load(str(tmp_path / "m.onnx"))
    concat = next(n for n in model.graph.node if n.op_type == "Concat")
    pool = onnx.helper.make_node("GlobalAveragePool", [concat.output[0]], ["pooled"], name="pool_of_concat")
    reader = next(n for n in model.graph.node if concat.output[0] in n.input)
    reader.input[list(reader.input).index(concat.output[0])] = "pooled"
    model.graph.node.insert(list(model.graph.node).index(reader), pool)
    onnx.save(model, str(tmp_path / "m.onnx"))
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", "pool_of_concat",
            "reads a concat over the height of columns")
