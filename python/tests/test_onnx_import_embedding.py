"""`octet import` of an ArcFace-style embedding head (insightface's iresnet):
x.float() of values already float, exported as Cast to FLOAT, passes through,
and a BatchNorm1d after the Linear layer (iresnet's `features`) is folded into
that layer; the logits match PyTorch's and int8 follows float. A BatchNorm1d
that no linear layer computes folds into the one reading it: fastai's head
(AdaptiveConcatPool2d, Flatten, BatchNorm1d, Dropout, Linear, ReLU,
BatchNorm1d, Dropout, Linear) and a BatchNorm1d of flattened pixels. A Cast to
a type that is not floating-point, and a BatchNorm1d that cannot be folded (its
value read by another node too), are refused naming the node."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402
from test_onnx_import import assert_imports_as_pytorch_computes, export, int8_agreement, refused, run_import  # noqa: E402

nn = torch.nn


class Embedding(nn.Module):
    """conv, BN, ReLU, flatten, then iresnet's head: fc(x.float()), features(x.float())."""

    def __init__(self, other_reader=False, after_flatten=False):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8 * 16 * 16, 10)
        self.features = nn.BatchNorm1d(8 * 16 * 16 if after_flatten else 10, eps=1e-3)
        self.other_reader, self.after_flatten = other_reader, after_flatten

    def forward(self, x):
        x = torch.flatten(torch.relu(self.conv(x)), 1)
        if self.after_flatten:
            return self.fc(self.features(x))
        y = self.fc(x.float())
        return self.features(y.float()) + (y if self.other_reader else 0)


def embedding(seed, **kwargs):
    torch.manual_seed(seed)
    model = Embedding(**kwargs)
    model.fc.weight.data *= 20  # logits of a few units
    bn = model.features
    bn.running_mean.uniform_(-2, 2)  # statistics and an affine that make the fold matter (eps 1e-3 too)
    bn.running_var.uniform_(0.5, 2.0)
    bn.weight.data.uniform_(0.5, 1.5)
    bn.bias.data.uniform_(-0.5, 0.5)
    return model.eval()


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(21).normal(size=(64, 3, 32, 32)).astype(np.float32)


def test_casts_and_a_batch_norm_of_rows_import_and_match_pytorch(tmp_path, octet_bin, images):
    model = embedding(71)
    export(model, tmp_path / "m.onnx")
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert ops.count("Cast") == 2 and ops.index("Gemm") < ops.index("BatchNormalization"), ops
    result = run_import(octet_bin, tmp_path / "m.onnx", tmp_path / "s.octet", "--json", str(tmp_path / "i.json"))
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "i.json").read_text())
    assert summary["folded_batch_norms"] == 1 and summary["octet_nodes"] == 5, summary  # input conv relu flatten fc
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "m.onnx", images)


def with_cast_of_bias(path, to):
    """The export with the Gemm's bias read through a Cast of that initializer (torch folds its own)."""
    m = onnx.load(str(path))
    k, gemm = next((k, n) for k, n in enumerate(m.graph.node) if n.op_type == "Gemm")
    m.graph.node.insert(k, helper.make_node("Cast", [gemm.input[2]], ["bias_cast"], name="bias_cast", to=to))
    gemm.input[2] = "bias_cast"
    onnx.save(m, str(path))


def test_a_cast_of_a_weight_to_float_is_the_weight(tmp_path, octet_bin, images):
    model = embedding(72)
    export(model, tmp_path / "m.onnx")
    with_cast_of_bias(tmp_path / "m.onnx", onnx.TensorProto.FLOAT)
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "m.onnx", images)


def test_casts_and_a_batch_norm_of_rows_quantize_and_int8_follows_float(tmp_path, octet_bin):
    assert int8_agreement(tmp_path, octet_bin, embedding(73)) >= 0.9


class Truncated(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(self.conv(x).int().float().mean((2, 3)))


def test_a_cast_to_a_type_that_is_not_floating_point_is_refused(tmp_path, octet_bin):
    export(Truncated().eval(), tmp_path / "int.onnx")
    refused(tmp_path, octet_bin, tmp_path / "int.onnx", "(Cast, opset 13)",
            "Cast to INT32: octet values are floating-point")
    export(embedding(74), tmp_path / "bias.onnx")
    with_cast_of_bias(tmp_path / "bias.onnx", onnx.TensorProto.INT64)
    refused(tmp_path, octet_bin, tmp_path / "bias.onnx", "node 'bias_cast' (Cast, opset 13)", "Cast to INT64")


class FastaiHead(nn.Module):
    """A conv body, then fastai's create_head: both global pools concatenated, and two Linear layers each after a
    BatchNorm1d and a Dropout."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 24, 3, 2, 1), nn.ReLU())
        self.head = nn.Sequential(nn.BatchNorm1d(48), nn.Dropout(0.25), nn.Linear(48, 32), nn.ReLU(),
                                  nn.BatchNorm1d(32), nn.Dropout(0.5), nn.Linear(32, 10))
        self.fc = self.head[-1]

    def forward(self, x):
        x = self.body(x)
        pooled = torch.cat([nn.functional.adaptive_max_pool2d(x, 1), nn.functional.adaptive_avg_pool2d(x, 1)], 1)
        return self.head(torch.flatten(pooled, 1))


def fastai_head(seed):
    torch.manual_seed(seed)
    model = FastaiHead()
    model.fc.weight.data *= 20
    for bn in (model.head[0], model.head[4]):
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.data.uniform_(0.5, 1.5)
        bn.bias.data.uniform_(-0.5, 0.5)
    return model.eval()


def test_batch_norms_of_rows_before_linear_layers_import_and_match_pytorch(tmp_path, octet_bin, images):
    model = fastai_head(77)
    export(model, tmp_path / "fastai.onnx")
    result = run_import(octet_bin, tmp_path / "fastai.onnx", tmp_path / "s.octet", "--json", str(tmp_path / "i.json"))
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "i.json").read_text())["folded_batch_norms"] == 2
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "fastai.onnx", images)
    flat = embedding(76, after_flatten=True)
    export(flat, tmp_path / "flat.onnx")
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, flat, tmp_path / "flat.onnx", images)


def test_batch_norms_of_rows_before_linear_layers_quantize_and_int8_follows_float(tmp_path, octet_bin):
    assert int8_agreement(tmp_path, octet_bin, fastai_head(78)) >= 0.9


def test_a_batch_norm_of_rows_that_cannot_be_folded_is_refused(tmp_path, octet_bin):
    export(embedding(75, other_reader=True), tmp_path / "shared.onnx")
    refused(tmp_path, octet_bin, tmp_path / "shared.onnx", "(BatchNormalization, opset 13)",
            "a constant BatchNormalization of rows", "another node reads them")
