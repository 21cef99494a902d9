"""`octet import` of ResNeSt's split attention (Zhang et al. 2020): a grouped
conv's r x C channels, their splits summed and pooled, two 1x1 convs to r x C
attention values, RadixSoftmax (a Reshape to [N, cardinality, r, -1], a
Transpose, a Softmax over the r splits of each channel), each split gated by
its attention and the products summed. As timm writes it (a Reshape to [N, r,
C, H, W], ReduceSum over axis 1, the gate Mul of two such views) and as the
authors' code does (torch.split, Python's sum), cardinality 1 and 2. A softmax
over two splits is the sigmoid of their difference; over four it is refused
naming the node. And SKNet's selective kernel as timm writes it: two paths
(3x3 convs, the second dilated) stacked (torch.stack: Unsqueeze, Concat over
axis 1), summed, pooled, a conv to 2 x C values viewed as [N, 2, C, 1, 1], a
softmax over the paths, each path gated and the products summed; three paths
are refused naming the softmax. PyTorch's logits are the reference; ONNX
Runtime runs the file and octet's int8 export as well."""

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import seeded  # noqa: E402
from torchscript_onnx import torchscript_export  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import imported, refused, varied_inputs  # noqa: E402

nn = torch.nn
F = nn.functional
IMAGE = (3, 32, 32)


class RadixSoftmax(nn.Module):
    def __init__(self, radix, cardinality):
        super().__init__()
        self.radix, self.cardinality = radix, cardinality

    def forward(self, x):
        batch = x.size(0)
        x = x.view(batch, self.cardinality, self.radix, -1).transpose(1, 2)
        return F.softmax(x, dim=1).reshape(batch, -1)


class SplitAttention(nn.Module):
    def __init__(self, channels, radix, cardinality, timm_form):
        super().__init__()
        self.radix, self.timm_form = radix, timm_form
        inter = 8 * cardinality
        self.conv = nn.Conv2d(channels, channels * radix, 3, padding=1, groups=cardinality * radix, bias=False)
        self.bn0 = nn.BatchNorm2d(channels * radix)
        self.fc1 = nn.Conv2d(channels, inter, 1, groups=cardinality)
        self.bn1 = nn.BatchNorm2d(inter)
        self.fc2 = nn.Conv2d(inter, channels * radix, 1, groups=cardinality)
        self.rsoftmax = RadixSoftmax(radix, cardinality)
        for bn in (self.bn0, self.bn1):
            bn.running_mean.uniform_(-0.3, 0.3)
            bn.running_var.uniform_(0.5, 2.0)
        self.fc2.weight.data *= 4  # attention away from one half each: the softmax must matter

    def forward(self, x):
        x = F.relu(self.bn0(self.conv(x)))
        batch, rc, h, w = x.shape
        if self.timm_form:
            x = x.reshape((batch, self.radix, rc // self.radix, h, w))
            gap = x.sum(dim=1)
        else:
            splits = torch.split(x, rc // self.radix, dim=1)
            gap = sum(splits)
        gap = F.relu(self.bn1(self.fc1(gap.mean((2, 3), keepdim=True))))
        attention = self.rsoftmax(self.fc2(gap)).view(batch, -1, 1, 1)
        if self.timm_form:
            return (x * attention.reshape((batch, self.radix, rc // self.radix, 1, 1))).sum(dim=1)
        return sum(a * s for a, s in zip(torch.split(attention, rc // self.radix, dim=1), splits))


class TwoBlocks(nn.Module):
    """A stem, two residual blocks of make_block(16 channels), a global pool and a classifier."""

    def __init__(self, make_block):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.blocks = nn.ModuleList(make_block(16) for _ in range(2))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = F.relu(x + block(x))
        return self.fc(x.mean((2, 3)))


@pytest.fixture(scope="module")
def images():
    return varied_inputs(28, 64, IMAGE)


def resnest(timm_form, cardinality=1, radix=2):
    return lambda: TwoBlocks(lambda c: SplitAttention(c, radix, cardinality, timm_form))


def sknet(paths=2):
    return lambda: TwoBlocks(lambda c: SelectiveKernel(c, paths))


def exported(path, seed, make):
    model = seeded(make, seed)
    torchscript_export(model, torch.zeros(1, *IMAGE), path, opset_version=13, input_names=["image"],
                       output_names=["logits"], dynamic_axes={"image": {0: "n"}, "logits": {0: "n"}})
    return model


FORMS = [(True, 1), (True, 2), (False, 1)]
IDS = ["timm", "timm_cardinality2", "authors"]


@pytest.mark.parametrize("timm_form, cardinality", FORMS, ids=IDS)
def test_split_attention_imports_and_matches_pytorch_and_onnx_runtime(tmp_path, octet_bin, images, timm_form,
                                                                      cardinality):
    model = exported(tmp_path / "resnest.onnx", 141, resnest(timm_form, cardinality))
    ops = [n.op_type for n in onnx.load(str(tmp_path / "resnest.onnx")).graph.node]
    assert ops.count("Softmax") == 2 and (ops.count("ReduceSum") == 4) == timm_form, ops
    checkpoint = imported(octet_bin, tmp_path / "resnest.onnx", tmp_path / "resnest.octet")
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "resnest.onnx", images)


@pytest.mark.parametrize("timm_form, cardinality", FORMS, ids=IDS)
def test_split_attention_quantizes_follows_float_and_exports(tmp_path, octet_bin, images, timm_form, cardinality):
    exported(tmp_path / "resnest.onnx", 142, resnest(timm_form, cardinality))
    imported(octet_bin, tmp_path / "resnest.onnx", tmp_path / "resnest.octet")
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "resnest.octet", images, images)


def test_a_softmax_over_four_splits_is_refused_naming_it(tmp_path, octet_bin):
    exported(tmp_path / "resnest.onnx", 143, resnest(True, radix=4))
    softmax = next(n.name for n in onnx.load(str(tmp_path / "resnest.onnx")).graph.node if n.op_type == "Softmax")
    refused(octet_bin, tmp_path / "resnest.onnx", tmp_path / "resnest.octet", softmax,
            "a softmax over 4 splits: octet takes 2")


class SelectiveKernel(nn.Module):
    """timm's SelectiveKernel and SelectiveKernelAttn, `paths` 3x3 convs dilated 1, 2, ..."""

    def __init__(self, channels, paths):
        super().__init__()
        self.paths = nn.ModuleList(nn.Sequential(nn.Conv2d(channels, channels, 3, padding=d, dilation=d, bias=False),
                                                 nn.BatchNorm2d(channels), nn.ReLU()) for d in range(1, paths + 1))
        self.fc_reduce = nn.Conv2d(channels, 8, 1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.fc_select = nn.Conv2d(8, channels * paths, 1, bias=False)
        self.fc_select.weight.data *= 4
        for bn in [self.bn] + [p[1] for p in self.paths]:
            bn.running_mean.uniform_(-0.3, 0.3)
            bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        x = torch.stack([path(x) for path in self.paths], dim=1)
        attention = F.relu(self.bn(self.fc_reduce(x.sum(1).mean((2, 3), keepdim=True))))
        attention = self.fc_select(attention)
        batch, c, h, w = attention.shape
        attention = torch.softmax(attention.view(batch, len(self.paths), c // len(self.paths), h, w), dim=1)
        return torch.sum(x * attention, dim=1)


def test_selective_kernel_imports_matches_pytorch_and_onnx_runtime_and_quantizes(tmp_path, octet_bin, images):
    model = exported(tmp_path / "sknet.onnx", 151, sknet())
    ops = [n.op_type for n in onnx.load(str(tmp_path / "sknet.onnx")).graph.node]
    assert ops.count("Softmax") == 2 and ops.count("Unsqueeze") >= 4, ops
    checkpoint = imported(octet_bin, tmp_path / "sknet.onnx", tmp_path / "sknet.octet")
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "sknet.onnx", images)
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "sknet.octet", images, images)


def test_a_softmax_over_three_paths_is_refused_naming_it(tmp_path, octet_bin):
    exported(tmp_path / "sknet.onnx", 152, sknet(paths=3))
    softmax = next(n.name for n in onnx.load(str(tmp_path / "sknet.onnx")).graph.node if n.op_type == "Softmax")
    refused(octet_bin, tmp_path / "sknet.onnx", tmp_path / "sknet.octet", softmax,
            "a softmax over 3 splits: octet takes 2")
