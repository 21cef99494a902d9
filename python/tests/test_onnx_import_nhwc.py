"""`octet import` of the forms TensorFlow's and Keras's CNNs take in ONNX
(tf2onnx): an N x H x W x C input moved to N x C x H x W by a first Transpose,
and a global pooling ended by a Squeeze of height and width (or two, as
PyTorch's x.squeeze(-1).squeeze(-1) writes them). The imported
checkpoint takes octet's N x C x H x W images, and its logits match PyTorch's
on the same images in N x H x W x C; int8 follows float; a Squeeze octet
cannot read is refused naming the node."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from dynamo_forms import as_dynamo_writes  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from test_onnx_import import export, int8_agreement, refused, run_import, seeded  # noqa: E402

import octet  # noqa: E402

nn = torch.nn


class Nhwc(nn.Module):
    """A CNN of N x H x W x C input; its pooled features squeezed (channels first) or, `last`, pooled
    and squeezed on a channels-last value."""

    def __init__(self, last):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.depthwise = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.fc = nn.Linear(16, 10)
        self.last = last

    def forward(self, x):
        x = torch.relu(self.depthwise(torch.relu(self.conv(x.permute(0, 3, 1, 2)))))
        if self.last:
            x = x.permute(0, 2, 3, 1).mean((1, 2), keepdim=True).squeeze(2).squeeze(1)
        else:
            x = x.mean((2, 3), keepdim=True).squeeze(3).squeeze(2)
        return self.fc(x)


def nhwc_model(seed, last):
    return seeded(lambda: Nhwc(last), seed, 20)


def one_squeeze(model):
    """torch 1.13 squeezes one axis at a time; tf2onnx writes one Squeeze of both axes, as here."""
    first, second = [n for n in model.graph.node if n.op_type == "Squeeze"]
    made = {n.output[0]: n.attribute[0].t for n in model.graph.node if n.op_type == "Constant"}
    both = sorted(int(numpy_helper.to_array(made[n.input[1]]).item()) for n in (first, second))
    model.graph.initializer.append(numpy_helper.from_array(np.array(both, np.int64), "squeezed_axes"))
    first.input[1] = "squeezed_axes"
    first.output[0] = second.output[0]
    model.graph.node.remove(second)
    return model


def export_nhwc(model, path, opset=13, squeezes=1):
    torch.onnx.export(model, torch.zeros(1, 32, 32, 3), str(path), opset_version=min(opset, 17),
                      input_names=["image"], output_names=["logits"])
    written = one_squeeze(onnx.load(str(path))) if squeezes == 1 else onnx.load(str(path))
    path.write_bytes((as_dynamo_writes(written, opset) if opset > 17 else written).SerializeToString())


# squeezes 2: PyTorch's x.squeeze(-1).squeeze(-1), one axis each.
@pytest.mark.parametrize("last, opset, squeezes", [(False, 13, 1), (True, 13, 1), (False, 20, 1), (False, 13, 2),
                                                   (True, 20, 2)])
def test_an_nhwc_model_imports_and_matches_pytorch(tmp_path, octet_bin, last, opset, squeezes):
    model = nhwc_model(51, last)
    export_nhwc(model, tmp_path / "nhwc.onnx", opset, squeezes)
    graph = onnx.load(str(tmp_path / "nhwc.onnx")).graph
    assert [d.dim_value for d in graph.input[0].type.tensor_type.shape.dim] == [1, 32, 32, 3]
    assert graph.node[0].op_type == "Transpose" and sum(n.op_type == "Squeeze" for n in graph.node) == squeezes
    result = run_import(octet_bin, tmp_path / "nhwc.onnx", tmp_path / "nhwc.octet")
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
    checkpoint = octet.load_checkpoint(str(tmp_path / "nhwc.octet"))
    assert checkpoint.input_shape == (3, 32, 32)
    images = np.random.default_rng(4).normal(size=(16, 3, 32, 32)).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(images.transpose(0, 2, 3, 1).copy())).numpy()
    got = checkpoint.predict(images)
    largest = np.abs(expected).max()
    assert largest > 1 and np.abs(got - expected).max() <= 1e-4 * largest, (np.abs(got - expected).max(), largest)


def test_an_nhwc_model_quantizes_and_int8_follows_float(tmp_path, octet_bin):
    export_nhwc(nhwc_model(52, False), tmp_path / "m.onnx")
    assert int8_agreement(tmp_path, octet_bin, None, tmp_path / "m.onnx") >= 0.9


class SqueezeOfChannels(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3)
        self.fc = nn.Linear(30, 10)

    def forward(self, x):
        return self.fc(self.conv(x).squeeze(1).mean(2))


def test_a_squeeze_of_other_axes_is_refused_by_node(tmp_path, octet_bin):
    export(SqueezeOfChannels().eval(), tmp_path / "m.onnx")
    refused(tmp_path, octet_bin, tmp_path / "m.onnx", "(Squeeze, opset 13)", "a squeeze other than of height and width")


class KerasFlatten(nn.Module):
    """Keras's Conv2D, MaxPooling2D, Flatten and Dense on an N x H x W x C input: the flatten, of the channels-last
    value, orders the features height, width, channels (`reshape`: as a Reshape to (batch, -1), else a Flatten);
    `relu_after`: a ReLU between the flatten and the Dense."""

    def __init__(self, reshape, relu_after=False):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 16 * 16, 10)
        self.reshape, self.relu_after = reshape, relu_after

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.conv(x.permute(0, 3, 1, 2))), 2).permute(0, 2, 3, 1)
        x = x.reshape(x.shape[0], -1) if self.reshape else x.flatten(1)
        return self.fc(torch.relu(x) if self.relu_after else x)


@pytest.mark.parametrize("reshape", [True, False], ids=["reshape", "flatten"])
def test_a_flatten_of_channels_last_values_imports_and_matches_pytorch(tmp_path, octet_bin, reshape):
    model = seeded(lambda: KerasFlatten(reshape), 53)
    torch.onnx.export(model, torch.zeros(1, 32, 32, 3), str(tmp_path / "keras.onnx"), opset_version=13,
                      input_names=["image"], output_names=["logits"])
    ops = [n.op_type for n in onnx.load(str(tmp_path / "keras.onnx")).graph.node]
    assert ("Reshape" if reshape else "Flatten") in ops, ops
    result = run_import(octet_bin, tmp_path / "keras.onnx", tmp_path / "keras.octet")
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
    images = np.random.default_rng(54).normal(size=(16, 3, 32, 32)).astype(np.float32)
    got = octet.load_checkpoint(str(tmp_path / "keras.octet")).predict(images)
    with torch.no_grad():
        expected = model(torch.from_numpy(images).permute(0, 2, 3, 1)).numpy()
    largest = np.abs(expected).max()
    assert largest > 1 and np.abs(got - expected).max() <= 1e-4 * largest, (np.abs(got - expected).max(), largest)
    assert int8_agreement(tmp_path, octet_bin, None, tmp_path / "keras.onnx") >= 0.9


def test_a_flatten_of_channels_last_values_not_read_by_a_dense_layer_is_refused(tmp_path, octet_bin):
    torch.onnx.export(seeded(lambda: KerasFlatten(True, relu_after=True), 55), torch.zeros(1, 32, 32, 3),
                      str(tmp_path / "keras.onnx"), opset_version=13)
    refused(tmp_path, octet_bin, tmp_path / "keras.onnx", "(Reshape, opset 13)",
            "a flatten of a channels-last value read by other than one Gemm or MatMul")
