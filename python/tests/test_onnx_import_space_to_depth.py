"""`octet import` of CNNs that move pixels into channels: YOLOv5's Focus stem
(x[..., ::2, ::2] and its three neighbours concatenated: Slices with a step of
2), nn.PixelUnshuffle and TResNet's SpaceToDepth stem (each a Reshape to [N, C,
H/b, b, W/b, b], a Transpose, a Reshape back, the channels in their two
orders), and ONNX's SpaceToDepth node. PyTorch's logits are the reference;
ONNX Runtime runs the file and octet's int8 export as well. A strided Slice
of channels, and a 6-D Reshape of another shape, are refused naming the node."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402
from test_onnx_import import seeded  # noqa: E402
from torchscript_onnx import torchscript_export  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import imported, refused, varied_inputs  # noqa: E402

nn = torch.nn
IMAGE = (3, 32, 32)


def focus(x):
    return torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)


def tresnet_space_to_depth(x, block=4):
    n, c, h, w = x.size()
    x = x.view(n, c, h // block, block, w // block, block).permute(0, 3, 5, 1, 2, 4).contiguous()
    return x.view(n, c * block * block, h // block, w // block)


class PixelsToChannels(nn.Module):
    """A stem that moves pixels into channels (`form`), two conv blocks, a global pool and a classifier."""

    def __init__(self, form):
        super().__init__()
        self.form = form
        block = {"focus": 2, "pixel_unshuffle": 2, "tresnet": 4}[form]
        self.unshuffle = nn.PixelUnshuffle(block)
        self.stem = nn.Sequential(nn.Conv2d(3 * block * block, 16, 3, padding=1), nn.BatchNorm2d(16), nn.SiLU())
        self.body = nn.Sequential(nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(),
                                  nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(32, 10)
        for bn in (self.stem[1], self.body[1]):
            bn.running_mean.uniform_(-0.3, 0.3)
            bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        x = {"focus": focus, "pixel_unshuffle": self.unshuffle, "tresnet": tresnet_space_to_depth}[self.form](x)
        return self.fc(self.body(self.stem(x)).mean((2, 3)))


@pytest.fixture(scope="module")
def images():
    return varied_inputs(27, 64, IMAGE)


def exported(path, seed, form):
    model = seeded(lambda: PixelsToChannels(form), seed, scale=60)
    torchscript_export(model, torch.zeros(1, *IMAGE), path, opset_version=13, input_names=["image"],
                       output_names=["logits"], dynamic_axes={"image": {0: "n"}, "logits": {0: "n"}})
    return model


FORMS = ["focus", "pixel_unshuffle", "tresnet"]


@pytest.mark.parametrize("form", FORMS)
def test_pixels_moved_into_channels_import_and_match_pytorch_and_onnx_runtime(tmp_path, octet_bin, images, form):
    model = exported(tmp_path / "m.onnx", 131, form)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert ops.count("Slice") == 6 if form == "focus" else "Transpose" in ops, ops  # torch shares x[..., ::2]
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "m.onnx", images)


@pytest.mark.parametrize("form", FORMS)
def test_pixels_moved_into_channels_quantize_follow_float_and_export(tmp_path, octet_bin, images, form):
    exported(tmp_path / "m.onnx", 132, form)
    imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "m.octet", images, images)


def as_onnx_space_to_depth(path):
    """The TResNet export with its Reshape, Transpose, Reshape replaced by one SpaceToDepth node of blocksize 4."""
    model = onnx.load(str(path))
    nodes = list(model.graph.node)
    first = next(k for k, n in enumerate(nodes) if n.op_type == "Transpose") - 1
    last = next(k for k in range(first + 2, len(nodes)) if nodes[k].op_type == "Reshape")
    assert nodes[first].op_type == "Reshape", [n.op_type for n in nodes[first:last + 1]]
    moved = helper.make_node("SpaceToDepth", [nodes[first].input[0]], [nodes[last].output[0]], name="space_to_depth",
                             blocksize=4)
    del model.graph.node[:]
    model.graph.node.extend(nodes[:first] + [moved] + nodes[last + 1:])
    onnx.save(model, str(path))


def test_onnx_space_to_depth_imports_as_the_reshapes_it_stands_for(tmp_path, octet_bin, images):
    model = exported(tmp_path / "m.onnx", 133, "tresnet")
    as_onnx_space_to_depth(tmp_path / "m.onnx")
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "m.onnx", images)


def test_a_strided_slice_of_channels_and_another_6d_reshape_are_refused(tmp_path, octet_bin):
    exported(tmp_path / "m.onnx", 134, "focus")
    model = onnx.load(str(tmp_path / "m.onnx"))
    stepped = next(n for n in model.graph.node if n.op_type == "Slice")
    axes = next(t for t in model.graph.initializer if t.name == stepped.input[3]) if stepped.input[3] in \
        {t.name for t in model.graph.initializer} else None
    if axes is None:  # a Constant node holds them
        axes_node = next(n for n in model.graph.node if n.output[0] == stepped.input[3])
        axes = axes_node.attribute[0].t
    axes.CopyFrom(onnx.numpy_helper.from_array(np.array([1], np.int64), axes.name))
    onnx.save(model, str(tmp_path / "channels.onnx"))
    refused(octet_bin, tmp_path / "channels.onnx", tmp_path / "m.octet", stepped.name,
            "a slice other than of channels (axis 1) with step 1")
    exported(tmp_path / "t.onnx", 135, "tresnet")
    model = onnx.load(str(tmp_path / "t.onnx"))
    transpose = next(n for n in model.graph.node if n.op_type == "Transpose")
    next(a for a in transpose.attribute if a.name == "perm").ints[:] = [0, 1, 2, 3, 5, 4]
    onnx.save(model, str(tmp_path / "t.onnx"))
    refused(octet_bin, tmp_path / "t.onnx", tmp_path / "m.octet", transpose.name,
            "other than PixelUnshuffle's (perm [0,1,3,5,2,4])")
