"""`octet import` of ONNX files at opsets 18 to 27: what PyTorch's default
exporter writes since 2.9 (dynamo, opset 20: dynamo_forms.py), and the ops
whose newer versions octet reads (ReduceMean-18's axes input, Split-18's
num_outputs, Pad-18's axes, Mish-18, Gelu-20, Swish-24). ONNX Runtime, which
implements those versions itself, is the reference for the files; octet's
float import matches it, and int8 follows float. What octet cannot read is
refused naming the node."""

import importlib.util
import inspect

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")
import octet  # noqa: E402
import ort_peer  # noqa: E402
from dynamo_forms import as_dynamo_writes  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402
from test_onnx_import import export, int8_agreement, random_model, refused, run_import, seeded  # noqa: E402
from test_onnx_import_convnext import tiny_convnext  # noqa: E402
from torchvision.models.shufflenetv2 import InvertedResidual, channel_shuffle  # noqa: E402
from torchvision.ops import SqueezeExcitation  # noqa: E402

nn = torch.nn


class ShuffleUnit(InvertedResidual):
    """ShuffleNetV2's unit of stride 1, its chunk(2) written split(C / 2): PyTorch 1.13 exports a chunk as shape
    arithmetic and Slices, and the dynamo exporter as one Split of num_outputs 2, as it does an even split."""

    def forward(self, x):
        kept, branched = x.split(self.branch2[0].in_channels, dim=1)
        return channel_shuffle(torch.cat((kept, self.branch2(branched)), 1), 2)


class ShuffleSe(nn.Module):
    """ShuffleNetV2's units (a chunk into halves, a channel shuffle; the strided one's concat) and a
    squeeze-excitation after a SiLU stem, as EfficientNet's."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 24, 3, padding=1, bias=False), nn.BatchNorm2d(24), nn.SiLU())
        self.unit = ShuffleUnit(24, 24, 1)
        self.excite = SqueezeExcitation(24, 8)
        self.down = InvertedResidual(24, 48, 2)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1), nn.Linear(48, 10))

    def forward(self, x):
        return self.head(self.down(self.excite(self.unit(self.stem(x)))))


def shuffle_se(seed):
    return seeded(ShuffleSe, seed, 400, lambda model: model.head[2])


def small_cnn(seed):
    model = random_model(seed)
    model.softmax = False
    return model


MODELS = {"small_cnn": small_cnn, "convnext": tiny_convnext, "shufflenet_se": shuffle_se}


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(7).normal(size=(16, 3, 32, 32)).astype(np.float32)


def needs_ort():
    why = ort_peer.missing()
    if why:
        pytest.skip(why)


def imported_logits(tmp_path, octet_bin, path):
    result = run_import(octet_bin, path, tmp_path / (path.stem + ".octet"))
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
    return result, octet.load_checkpoint(str(tmp_path / (path.stem + ".octet")))


def ort_per_image(path, images):
    """ONNX Runtime's outputs for a file of batch 1 (as the exporters write it), one image at a time."""
    return np.concatenate([ort_peer.run(path, [image[None]])[0] for image in images])


def assert_close(got, expected):
    largest = np.abs(expected).max()
    assert largest > 1
    assert np.abs(got - expected).max() <= 1e-4 * largest, (np.abs(got - expected).max(), largest)


# convnext from opset 13: LayerNorm as its steps, their ReduceMeans' axes inputs at 18.
@pytest.mark.parametrize("name, exported, opset", [("small_cnn", 17, 18), ("small_cnn", 17, 20), ("convnext", 17, 18),
                                                   ("convnext", 17, 20), ("convnext", 13, 18),
                                                   ("shufflenet_se", 17, 20)])
def test_the_default_exporters_forms_import_and_match_onnx_runtime(tmp_path, octet_bin, images, name, exported, opset):
    needs_ort()
    model = MODELS[name](21)
    export(model, tmp_path / "exported.onnx", opset=exported)
    written = as_dynamo_writes(onnx.load(str(tmp_path / "exported.onnx")), opset)
    ops = {n.op_type for n in written.graph.node}
    assert "ReduceMean" in ops and not ops & {"Constant", "GlobalAveragePool", "Flatten"}, ops
    assert ("Gelu" in ops) == (name == "convnext" and opset >= 20), ops
    splits = [n for n in written.graph.node if n.op_type == "Split"]
    assert all(a.name == "num_outputs" for n in splits for a in n.attribute if a.name != "axis")
    assert len(splits) == (1 if name == "shufflenet_se" else 0)
    assert ("LayerNormalization" in ops) == (name == "convnext" and exported >= 17), ops
    path = tmp_path / f"{name}_opset{opset}.onnx"
    path.write_bytes(written.SerializeToString())
    with torch.no_grad():
        expected = model(torch.from_numpy(images)).numpy()
    assert_close(ort_per_image(path, images[:3]), expected[:3])  # the rewrite is the same model
    _, checkpoint = imported_logits(tmp_path, octet_bin, path)
    assert_close(checkpoint.predict(images), expected)


def test_an_opset_20_file_quantizes_and_int8_follows_float(tmp_path, octet_bin):
    model = shuffle_se(22)
    export(model, tmp_path / "m17.onnx", opset=17)
    (tmp_path / "m20.onnx").write_bytes(as_dynamo_writes(onnx.load(str(tmp_path / "m17.onnx")), 20).SerializeToString())
    assert int8_agreement(tmp_path, octet_bin, model, tmp_path / "m20.onnx") >= 0.9


def conv_model(tmp_path, name, body, opset, extra=(), channels=8):
    """image [1, 3, 32, 32] -> Conv 3x3 to `channels` ("c") -> `body` (nodes reading "c", ending in "y",
    [1, C', H', W']) -> ReduceMean over height and width -> Gemm to 10 logits."""
    rng = np.random.default_rng(len(name))
    image = helper.make_tensor_value_info("image", onnx.TensorProto.FLOAT, [1, 3, 32, 32])
    logits = helper.make_tensor_value_info("logits", onnx.TensorProto.FLOAT, [1, 10])
    head = [helper.make_node("Conv", ["image", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            *body,
            helper.make_node("ReduceMean", ["y", "axes23"], ["pooled"], name="pool", keepdims=0),
            helper.make_node("Gemm", ["pooled", "fc"], ["logits"], name="fc", transB=1)]
    weights = [numpy_helper.from_array(rng.normal(size=(channels, 3, 3, 3)).astype(np.float32), "w"),
               numpy_helper.from_array(rng.normal(size=channels).astype(np.float32), "b"),
               numpy_helper.from_array(np.array([2, 3], np.int64), "axes23"),
               numpy_helper.from_array(20 * rng.normal(size=(10, channels)).astype(np.float32), "fc"), *extra]
    graph = helper.make_graph(head, name, [image], [logits], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


NEWER_NODES = {
    # 8 channels in parts of 3, 3 and 2, concatenated last first.
    "split18_uneven": (18, [helper.make_node("Split", ["c"], ["p0", "p1", "p2"], name="split", axis=1, num_outputs=3),
                            helper.make_node("Concat", ["p2", "p0", "p1"], ["y"], name="join", axis=1)], []),
    "pad18_axes": (18, [helper.make_node("Pad", ["c", "pads", "", "hw"], ["padded"], name="pad"),
                        helper.make_node("Relu", ["padded"], ["y"], name="relu")],
                   [ints("pads", [1, 0, 2, 3]), ints("hw", [-2, -1])]),
    "gelu20": (20, [helper.make_node("Gelu", ["c"], ["y"], name="gelu")], []),
    "mish18": (18, [helper.make_node("Mish", ["c"], ["y"], name="mish")], []),
    "swish24": (24, [helper.make_node("Swish", ["c"], ["y"], name="swish")], []),
}


@pytest.mark.parametrize("name", list(NEWER_NODES))
def test_newer_operator_versions_import_and_match_onnx_runtime(tmp_path, octet_bin, images, name):
    needs_ort()
    opset, body, extra = NEWER_NODES[name]
    path = conv_model(tmp_path, name, body, opset, extra=extra)
    expected = ort_per_image(path, images[:4])
    _, checkpoint = imported_logits(tmp_path, octet_bin, path)
    assert_close(checkpoint.predict(images[:4]), expected)


REFUSED = {
    "opset28": (28, [helper.make_node("Relu", ["c"], ["y"], name="relu")], [], "opset 28 is outside"),
    "mean_three_inputs": (18, [helper.make_node("ReduceMean", ["c", "axes23", "axes23"], ["y"], name="mean")], [],
                          "inputs: 3 (ONNX says 1 to 2)"),
    "mean_no_op": (18, [helper.make_node("ReduceMean", ["c"], ["y"], name="mean", noop_with_empty_axes=1)], [],
                   "no axes to reduce"),
    "mean_axis_out_of_range": (18, [helper.make_node("ReduceMean", ["c", "axis7"], ["y"], name="mean")],
                               [ints("axis7", [7])], "axis 7 of a 4-D value"),
    "dilated_average_pool19": (19, [helper.make_node("AveragePool", ["c"], ["y"], name="pool", kernel_shape=[2, 2],
                                                     dilations=[2, 2])], [], "dilated pooling"),
    "wrap_pad19": (19, [helper.make_node("Pad", ["c", "pads"], ["y"], name="pad", mode="wrap")],
                   [ints("pads", [0, 0, 1, 1, 0, 0, 1, 1])], "octet pads height and width with up to 64 zeros"),
    "pad_axes_twice": (18, [helper.make_node("Pad", ["c", "pads", "", "twice"], ["y"], name="pad")],
                       [ints("pads", [1, 1, 1, 1]), ints("twice", [2, -2])], "each of a 4-D value's at most once"),
    "split_num_outputs_mismatch": (18, [helper.make_node("Split", ["c"], ["a", "b"], name="split", axis=1,
                                                         num_outputs=3),
                                        helper.make_node("Add", ["a", "b"], ["y"], name="sum")], [],
                                   "num_outputs 3 for 2 outputs"),
    "mish_without_input": (18, [helper.make_node("Mish", [], ["y"], name="mish")], [], "inputs: 0 (ONNX says 1)"),
    "swish_alpha": (24, [helper.make_node("Swish", ["c"], ["y"], name="swish", alpha=0.5)], [], "alpha other than 1"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_what_newer_opsets_allow_and_octet_cannot_read_is_refused_by_node(tmp_path, octet_bin, name):
    opset, body, extra, message = REFUSED[name]
    path = conv_model(tmp_path, name, body, opset, extra=extra)
    refused(tmp_path, octet_bin, path, message, *([f"(ReduceMean, opset {opset})"] if "mean" in name else []))


@pytest.mark.skipif("dynamo" not in inspect.signature(torch.onnx.export).parameters
                    or importlib.util.find_spec("onnxscript") is None,
                    reason="this PyTorch has no dynamo exporter (2.5 and later, with onnxscript) to write the file")
@pytest.mark.parametrize("name", list(MODELS))
def test_pytorchs_default_export_imports_and_matches_pytorch(tmp_path, octet_bin, images, name):
    model = MODELS[name](23)
    torch.onnx.export(model, (torch.zeros(1, 3, 32, 32),), str(tmp_path / "m.onnx"), dynamo=True)
    _, checkpoint = imported_logits(tmp_path, octet_bin, tmp_path / "m.onnx")
    with torch.no_grad():
        assert_close(checkpoint.predict(images), model(torch.from_numpy(images)).numpy())
