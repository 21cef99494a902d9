"""`octet import` of CBAM (Woo et al. 2018, convolutional block attention):
after each residual block's convs, a channel attention (a shared MLP of 1x1
convs over the global average and max pools, their sum's sigmoid, a gate
per channel) and a spatial attention (the mean and the maximum of each
pixel's channels, ReduceMean and ReduceMax over axis 1, concatenated, a 7x7
conv, its sigmoid, a gate per pixel: Mul by N x 1 x H x W), the reductions
kept (x.mean(1, keepdim=True)) or, as CBAM's original ChannelPool writes
them, dropped and restored (torch.max(x, 1)[0].unsqueeze(1)). And SENet's
reference implementation (moskomule/senet.pytorch): the gate of Linear
layers over the pooled channels, y.view(b, c, 1, 1), x * y.expand_as(x).
PyTorch's logits are the reference; ONNX Runtime runs the file and octet's
int8 export as well."""

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


class Cbam(nn.Module):
    def __init__(self, channels, unsqueezed, reduction=4):
        super().__init__()
        self.unsqueezed = unsqueezed
        self.mlp = nn.Sequential(nn.Conv2d(channels, channels // reduction, 1), nn.ReLU(),
                                 nn.Conv2d(channels // reduction, channels, 1))
        self.spatial = nn.Conv2d(2, 1, 7, padding=3)

    def forward(self, x):
        pooled = nn.functional.adaptive_avg_pool2d(x, 1), nn.functional.adaptive_max_pool2d(x, 1)
        x = x * torch.sigmoid(self.mlp(pooled[0]) + self.mlp(pooled[1]))
        if self.unsqueezed:
            described = torch.cat([torch.max(x, 1)[0].unsqueeze(1), torch.mean(x, 1).unsqueeze(1)], 1)
        else:
            described = torch.cat([x.mean(1, keepdim=True), x.amax(1, keepdim=True)], 1)
        return x * torch.sigmoid(self.spatial(described))


class CbamResNet(nn.Module):
    def __init__(self, unsqueezed=False):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.blocks = nn.Sequential(*[AttentionBlock(n_in, n_out, stride, Cbam(n_out, unsqueezed))
                                      for n_in, n_out, stride in ((16, 16, 1), (16, 32, 2), (32, 64, 2))])
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


@pytest.fixture(scope="module")
def images():
    return varied_inputs(24, 64, IMAGE)


def exported(path, seed, unsqueezed=False):
    model = seeded(lambda: CbamResNet(unsqueezed), seed)
    torchscript_export(model, torch.zeros(1, *IMAGE), path, opset_version=13, input_names=["image"],
                       output_names=["logits"], dynamic_axes={"image": {0: "n"}, "logits": {0: "n"}})
    return model


@pytest.mark.parametrize("unsqueezed", [False, True], ids=["keepdim", "unsqueezed"])
def test_cbam_resnet_imports_and_matches_pytorch_and_onnx_runtime(tmp_path, octet_bin, images, unsqueezed):
    model = exported(tmp_path / "cbam.onnx", 101, unsqueezed)
    nodes = onnx.load(str(tmp_path / "cbam.onnx")).graph.node
    over_channels = [n for n in nodes if n.op_type in ("ReduceMean", "ReduceMax") and
                     list(next(a for a in n.attribute if a.name == "axes").ints) == [1]]
    assert len(over_channels) == 6, [n.op_type for n in nodes]
    assert sum(n.op_type == "Unsqueeze" for n in nodes) == (6 if unsqueezed else 0)
    checkpoint = imported(octet_bin, tmp_path / "cbam.onnx", tmp_path / "cbam.octet")
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "cbam.onnx", images)


@pytest.mark.parametrize("unsqueezed", [False, True], ids=["keepdim", "unsqueezed"])
def test_cbam_resnet_quantizes_follows_float_and_exports(tmp_path, octet_bin, images, unsqueezed):
    exported(tmp_path / "cbam.onnx", 102, unsqueezed)
    imported(octet_bin, tmp_path / "cbam.onnx", tmp_path / "cbam.octet")
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "cbam.octet", images, images)


def test_a_channel_reduction_that_drops_the_axis_is_refused_naming_it(tmp_path, octet_bin):
    exported(tmp_path / "cbam.onnx", 103)
    model = onnx.load(str(tmp_path / "cbam.onnx"))
    reduce = next(n for n in model.graph.node if n.op_type == "ReduceMean" and
                  list(next(a for a in n.attribute if a.name == "axes").ints) == [1])
    next(a for a in reduce.attribute if a.name == "keepdims").i = 0
    onnx.save(model, str(tmp_path / "cbam.onnx"))
    refused(octet_bin, tmp_path / "cbam.onnx", tmp_path / "cbam.octet", reduce.name,
            "over the channels without keepdims")


class LinearSe(nn.Module):
    """SENet's squeeze-and-excitation as its reference implementation writes it."""

    def __init__(self, channels, reduction=4, expanded_into=None):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(channels, channels // reduction, bias=False), nn.ReLU(),
                                nn.Linear(channels // reduction, channels, bias=False), nn.Sigmoid())
        self.expanded_into = expanded_into or (lambda x, gate: x * gate)

    def forward(self, x):
        b, c, _, _ = x.size()
        y = self.fc(nn.functional.adaptive_avg_pool2d(x, 1).view(b, c)).view(b, c, 1, 1)
        return self.expanded_into(x, y.expand_as(x))


class SeNet(nn.Module):
    def __init__(self, expanded_into=None):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.se1 = LinearSe(16, expanded_into=expanded_into)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.se2 = LinearSe(32, expanded_into=expanded_into)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.se1(torch.relu(self.conv1(x)))
        return self.fc(self.se2(torch.relu(self.conv2(x))).mean((2, 3)))


def exported_senet(path, seed, **kwargs):
    model = seeded(lambda: SeNet(**kwargs), seed, scale=100)
    torchscript_export(model, torch.zeros(1, *IMAGE), path, opset_version=13, input_names=["image"],
                       output_names=["logits"], dynamic_axes={"image": {0: "n"}, "logits": {0: "n"}})
    return model


def test_senet_expand_as_imports_matches_pytorch_and_onnx_runtime_and_quantizes(tmp_path, octet_bin, images):
    model = exported_senet(tmp_path / "se.onnx", 104)
    assert [n.op_type for n in onnx.load(str(tmp_path / "se.onnx")).graph.node].count("Expand") == 2
    checkpoint = imported(octet_bin, tmp_path / "se.onnx", tmp_path / "se.octet")
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "se.onnx", images)
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "se.octet", images, images)


def test_an_expand_read_other_than_by_a_product_is_refused_naming_it(tmp_path, octet_bin):
    exported_senet(tmp_path / "se.onnx", 105, expanded_into=lambda x, gate: torch.cat([x, gate], 1)[:, :x.size(1)])
    expand = next(n.name for n in onnx.load(str(tmp_path / "se.onnx")).graph.node if n.op_type == "Expand")
    refused(octet_bin, tmp_path / "se.onnx", tmp_path / "se.octet", expand, "an Expand other than before a Mul")
