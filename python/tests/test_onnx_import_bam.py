"""`octet import` of BAM, the Bottleneck Attention Module (Park et al., BMVC
2018) as its authors' code writes it: a channel gate (an average pool of the
whole image, flattened rows, Linear, BatchNorm1d, ReLU, Linear, unsqueezed at
axes 2 and 3) and a spatial gate (a 1x1 conv, two dilated 3x3 convs, a 1x1
conv to one channel), each expand_as(x), multiplied, x * (1 + sigmoid(that)).
The product of a value per channel and one per pixel is the former repeated
over the pixels (Upsamples) times the latter. PyTorch's logits are the
reference; ONNX Runtime runs the file and octet's int8 export as well. Other
Expands and unsqueezes of rows are refused naming the node."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import seeded  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import export_image_model, imported, randomise_batch_norms, refused, varied_inputs  # noqa

nn = torch.nn
IMAGE = (3, 32, 24)


class ChannelGate(nn.Module):
    def __init__(self, channels, reduction=4):
        super().__init__()
        self.gate = nn.Sequential(nn.Flatten(), nn.Linear(channels, channels // reduction),
                                  nn.BatchNorm1d(channels // reduction), nn.ReLU(),
                                  nn.Linear(channels // reduction, channels))

    def forward(self, x):
        size = int(x.size(2))  # the authors' F.avg_pool2d(x, x.size(2)) traces only with a number
        gate = self.gate(nn.functional.avg_pool2d(x, (size, int(x.size(3)))))
        return gate.unsqueeze(2).unsqueeze(3).expand_as(x) if self.expand else gate.unsqueeze(2).unsqueeze(3)


class SpatialGate(nn.Module):
    def __init__(self, channels, reduction=4, dilation=2):
        super().__init__()
        middle = channels // reduction
        layers = [nn.Conv2d(channels, middle, 1), nn.BatchNorm2d(middle), nn.ReLU()]
        for _ in range(2):
            layers += [nn.Conv2d(middle, middle, 3, padding=dilation, dilation=dilation), nn.BatchNorm2d(middle),
                       nn.ReLU()]
        self.gate = nn.Sequential(*layers, nn.Conv2d(middle, 1, 1))

    def forward(self, x):
        return self.gate(x).expand_as(x) if self.expand else self.gate(x)


class BAM(nn.Module):
    def __init__(self, channels, expand):
        super().__init__()
        self.channel_att, self.spatial_att = ChannelGate(channels), SpatialGate(channels)
        self.channel_att.expand = self.spatial_att.expand = expand

    def forward(self, x):
        return (1 + torch.sigmoid(self.channel_att(x) * self.spatial_att(x))) * x


class Net(nn.Module):
    """Two strided conv stages, BAM after each (as BAM-ResNet places it between stages), and a classifier."""

    def __init__(self, expand=True):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 16, 3, 2, 1), nn.Conv2d(16, 32, 3, 2, 1)])
        self.bams = nn.ModuleList([BAM(16, expand), BAM(32, expand)])
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        for conv, bam in zip(self.convs, self.bams):
            x = bam(torch.relu(conv(x)))
        return self.fc(x.mean((2, 3)))


def randomise_row_norms(model):
    for bn in (m for m in model.modules() if isinstance(m, nn.BatchNorm1d)):
        bn.running_mean.uniform_(-0.3, 0.3)
        bn.running_var.uniform_(0.5, 2.0)
    return model


def exported(path, seed, expand=True):
    model = randomise_row_norms(randomise_batch_norms(seeded(lambda: Net(expand), seed, scale=1200)))
    return export_image_model(model, path, IMAGE)


def unsqueezed_at_once(path):
    """Each Unsqueeze of axis 2 and the Unsqueeze of axis 3 after it made one of axes [2, 3] (opset 13's form of
    x[:, :, None, None] in other exporters)."""
    model = onnx.load(str(path))
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array([2, 3], dtype=np.int64), "axes_2_3"))
    for second in [n for n in model.graph.node if n.op_type == "Unsqueeze"]:
        first = next((n for n in model.graph.node if n.op_type == "Unsqueeze" and n.output[0] == second.input[0]), None)
        if first is None:
            continue
        first.input[1] = "axes_2_3"
        for reader in model.graph.node:
            reader.input[:] = [first.output[0] if name == second.output[0] else name for name in reader.input]
        model.graph.node.remove(second)
    onnx.save(model, str(path))
    return sum(n.op_type == "Unsqueeze" for n in model.graph.node)


@pytest.fixture(scope="module")
def images():
    return varied_inputs(49, 64, IMAGE)


@pytest.mark.parametrize("unsqueeze", ["twice", "at_once", "broadcast"])
def test_bam_imports_and_matches_pytorch(tmp_path, octet_bin, images, unsqueeze):
    """Also with the gates broadcast by the Mul itself, not expand_as(x) first."""
    model = exported(tmp_path / "m.onnx", 191, expand=unsqueeze != "broadcast")
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert ops.count("Expand") == (0 if unsqueeze == "broadcast" else 4) and ops.count("Unsqueeze") == 4, ops
    if unsqueeze == "at_once":
        assert unsqueezed_at_once(tmp_path / "m.onnx") == 2
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "m.onnx", images)


def test_bam_quantizes_follows_float_and_exports(tmp_path, octet_bin, images):
    exported(tmp_path / "m.onnx", 192)
    imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "m.octet", images, images)


def test_an_unsqueeze_of_rows_at_axis_1_is_refused(tmp_path, octet_bin):
    exported(tmp_path / "m.onnx", 193)
    model = onnx.load(str(tmp_path / "m.onnx"))
    first = next(n for n in model.graph.node if n.op_type == "Unsqueeze")
    axes = next(n for n in model.graph.node if n.output[0] == first.input[1])
    axes.attribute[0].t.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(axes.attribute[0].t) * 0 + 1))
    onnx.save(model, str(tmp_path / "m.onnx"))
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", first.name, "an unsqueeze of rows other than")
