"""`octet import` of torchvision's transform_input (GoogLeNet and Inception-v3
with their pretrained weights: each colour taken by x[:, k], scaled, shifted
and concatenated again), as torch.onnx.export writes it (Gather of one
channel, Unsqueeze, Mul, Add, Concat) and as PyTorch's default exporter does
at opset 20: the logits match PyTorch's, int8 follows float, and a Gather
octet cannot read is refused naming the node."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")
from dynamo_forms import as_dynamo_writes  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402
from test_onnx_import import assert_imports_as_pytorch_computes, export, int8_agreement, refused, seeded  # noqa: E402

nn = torch.nn


class TransformedInput(nn.Module):
    """torchvision's GoogLeNet._transform_input itself, then a conv, ReLU, global pool and linear layer."""

    transform_input = True

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = torchvision.models.GoogLeNet._transform_input(self, x)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(torch.relu(self.conv(x)), 1), 1))


def transformed_input(seed):
    return seeded(TransformedInput, seed, 20)


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(9).normal(size=(32, 3, 32, 32)).astype(np.float32)


@pytest.mark.parametrize("opset", [13, 20])
def test_transform_input_imports_and_matches_pytorch(tmp_path, octet_bin, images, opset):
    model = transformed_input(31)
    path = tmp_path / f"transform_input{opset}.onnx"
    export(model, path, opset=min(opset, 17))
    if opset > 17:
        path.write_bytes(as_dynamo_writes(onnx.load(str(path)), opset).SerializeToString())
    ops = [n.op_type for n in onnx.load(str(path)).graph.node]
    assert ops.count("Gather") == 3 and ops.count("Unsqueeze") == 3, ops
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, path, images)


def test_transform_input_quantizes_and_int8_follows_float(tmp_path, octet_bin):
    assert int8_agreement(tmp_path, octet_bin, transformed_input(32)) >= 0.9


def gather_model(tmp_path, name, index, axis=1, unsqueeze_axes=(1,)):
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 32, 32])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)
    nodes = [helper.make_node("Gather", ["x", "index"], ["g"], name="pick", axis=axis),
             helper.make_node("Unsqueeze", ["g", "axes"], ["y"], name="restore")]
    weights = [numpy_helper.from_array(np.array(index, np.int64), "index"),
               numpy_helper.from_array(np.array(unsqueeze_axes, np.int64), "axes")]
    graph = helper.make_graph(nodes, name, [x], [y], weights)
    path = tmp_path / f"{name}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


@pytest.mark.parametrize("name, index, axis, axes, message", [
    ("two_channels", [0, 2], 1, (1,), "a gather other than of one channel"),
    ("of_rows_axis", 0, 2, (2,), "a gather other than of one channel"),
    ("not_restored", 0, 1, (0,), "a gather other than of one channel"),
    ("out_of_range", 3, 1, (1,), "index 3 of 3 channels"),
])
def test_a_gather_octet_cannot_read_is_refused_by_node(tmp_path, octet_bin, name, index, axis, axes, message):
    refused(tmp_path, octet_bin, gather_model(tmp_path, name, index, axis, axes), "node 'pick' (Gather", message)
