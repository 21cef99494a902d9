"""`octet import` of PoolFormer (Yu et al. 2022, MetaFormer's baseline), as
timm writes it: each block's token mixer is pool(x) - x (an average pool of
3x3 that does not count its padding, less its input: a difference of two
computed values, the second also read by the pool, so its sign becomes a
depthwise 1x1 conv of weight -1), after a GroupNorm of one group, each branch
scaled by a layer scale per channel; the channel MLP two 1x1 convs about a
GELU. PyTorch's logits are the reference; ONNX Runtime runs the file and
octet's int8 export as well. A sum or difference that broadcasts one channel
over many (x - x.mean(1)) is refused naming the node."""

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import seeded  # noqa: E402
from torchscript_onnx import torchscript_export  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import imported, refused, varied_inputs  # noqa: E402

nn = torch.nn
IMAGE = (3, 32, 32)


class Pooling(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)

    def forward(self, x):
        return self.pool(x) - x


class PoolFormerBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1, self.norm2 = nn.GroupNorm(1, dim), nn.GroupNorm(1, dim)
        self.token_mixer = Pooling()
        self.mlp = nn.Sequential(nn.Conv2d(dim, 4 * dim, 1), nn.GELU(), nn.Conv2d(4 * dim, dim, 1))
        self.layer_scale_1 = nn.Parameter(torch.empty(dim).uniform_(0.5, 1.5))
        self.layer_scale_2 = nn.Parameter(torch.empty(dim).uniform_(0.5, 1.5))
        for norm in (self.norm1, self.norm2):
            norm.weight.data.uniform_(0.5, 1.5)
            norm.bias.data.uniform_(-0.3, 0.3)

    def forward(self, x):
        x = x + self.layer_scale_1.unsqueeze(-1).unsqueeze(-1) * self.token_mixer(self.norm1(x))
        return x + self.layer_scale_2.unsqueeze(-1).unsqueeze(-1) * self.mlp(self.norm2(x))


class PoolFormer(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, 2, 1)
        self.stages = nn.Sequential(PoolFormerBlock(16), PoolFormerBlock(16), nn.Conv2d(16, 32, 3, 2, 1),
                                    PoolFormerBlock(32))
        self.norm = nn.GroupNorm(1, 32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(self.norm(self.stages(self.stem(x))).mean((2, 3)))


@pytest.fixture(scope="module")
def images():
    return varied_inputs(26, 64, IMAGE)


def exported(path, seed):
    model = seeded(PoolFormer, seed)
    torchscript_export(model, torch.zeros(1, *IMAGE), path, opset_version=13, input_names=["image"],
                       output_names=["logits"], dynamic_axes={"image": {0: "n"}, "logits": {0: "n"}})
    return model


def test_poolformer_imports_and_matches_pytorch_and_onnx_runtime(tmp_path, octet_bin, images):
    model = exported(tmp_path / "poolformer.onnx", 121)
    assert [n.op_type for n in onnx.load(str(tmp_path / "poolformer.onnx")).graph.node].count("Sub") >= 3
    checkpoint = imported(octet_bin, tmp_path / "poolformer.onnx", tmp_path / "poolformer.octet")
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "poolformer.onnx", images)


def test_poolformer_quantizes_follows_float_and_exports(tmp_path, octet_bin, images):
    exported(tmp_path / "poolformer.onnx", 122)
    imported(octet_bin, tmp_path / "poolformer.onnx", tmp_path / "poolformer.octet")
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "poolformer.octet", images, images)


class Centred(nn.Module):
    """x - x.mean(1) (or +): a difference or sum that broadcasts one channel over many, which octet has no
    operator for."""

    def __init__(self, op):
        super().__init__()
        self.op = op
        self.conv, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.Linear(8, 10)

    def forward(self, x):
        x = self.conv(x)
        x = x - x.mean(1, keepdim=True) if self.op == "Sub" else x + x.mean(1, keepdim=True)
        return self.fc(torch.relu(x).mean((2, 3)))


@pytest.mark.parametrize("op", ["Sub", "Add"])
def test_a_broadcast_of_computed_values_is_refused_naming_the_node(tmp_path, octet_bin, op):
    torchscript_export(Centred(op).eval(), torch.zeros(1, *IMAGE), tmp_path / "m.onnx", opset_version=13,
                       input_names=["image"], output_names=["logits"])
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", f"/{op}' ({op}, opset 13)", "8x32x32 and 1x32x32",
            "computed values of one shape")
