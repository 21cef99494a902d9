"""`octet import` of norms and powers of computed values: F.normalize of pooled
features before the classifier (ReduceL2 over the channels, Clip at eps, an
Expand, a Div), PixelNorm over an image's channels (x * rsqrt(mean of x^2 +
eps): Pow 2, ReduceMean, Add, Sqrt, 1 / it, Mul), and Sqrt, Reciprocal and Pow
of 0.5 and -1 elsewhere in a CNN. PyTorch's logits are the reference; ONNX
Runtime runs the file and octet's int8 export as well. An exponent octet has
no table for is refused naming the node."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import seeded  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import export_image_model, imported, refused, varied_inputs  # noqa: E402

nn = torch.nn
F = torch.nn.functional
IMAGE = (3, 32, 32)


class Net(nn.Module):
    """Two conv blocks and a classifier, with `form` between them or before the classifier."""

    def __init__(self, form):
        super().__init__()
        self.form = form
        self.convs = nn.ModuleList([nn.Conv2d(3, 16, 3, 2, 1), nn.Conv2d(16, 32, 3, 2, 1)])
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.convs[0](x))
        if self.form == "pixel_norm":
            x = x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-8)
        if self.form == "powers":  # a gate 1 / (1 + sqrt(x)), then x^-1 of a positive value, x^0.5
            x = x * torch.reciprocal(1 + torch.sqrt(x)) + x.pow(0.5) + (x + 2).pow(-1)
        features = torch.relu(self.convs[1](x)).mean((2, 3))
        return self.fc(F.normalize(features, dim=1) * 8 if self.form == "normalize" else features)


FORMS = ["normalize", "pixel_norm", "powers"]


@pytest.fixture(scope="module")
def images():
    return varied_inputs(41, 64, IMAGE)


def exported(path, seed, form):
    return export_image_model(seeded(lambda: Net(form), seed, scale=60), path, IMAGE)


@pytest.mark.parametrize("form", FORMS)
def test_norms_and_powers_import_and_match_pytorch_and_onnx_runtime(tmp_path, octet_bin, images, form):
    model = exported(tmp_path / "m.onnx", 161, form)
    ops = {n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node}
    assert {"normalize": {"ReduceL2", "Expand", "Div"}, "pixel_norm": {"Pow", "Sqrt", "Div"},
            "powers": {"Sqrt", "Reciprocal", "Pow"}}[form] <= ops, ops
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "m.onnx", images)


@pytest.mark.parametrize("form", FORMS)
def test_norms_and_powers_quantize_follow_float_and_export(tmp_path, octet_bin, images, form):
    exported(tmp_path / "m.onnx", 162, form)
    imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "m.octet", images, images)


def test_an_exponent_without_a_table_is_refused(tmp_path, octet_bin):
    exported(tmp_path / "m.onnx", 163, "pixel_norm")
    model = onnx.load(str(tmp_path / "m.onnx"))
    power = next(n for n in model.graph.node if n.op_type == "Pow")
    three = onnx.helper.make_node("Constant", [], ["three"],
                                  value=onnx.numpy_helper.from_array(np.array(3.0, np.float32)))
    power.input[1] = "three"
    model.graph.node.insert(0, three)
    onnx.save(model, str(tmp_path / "m.onnx"))
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", power.name, "an exponent other than 2, 0.5, 1 or -1")
