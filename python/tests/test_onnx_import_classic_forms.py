"""`octet import` of the forms older converters write (Caffe2's and tf2onnx's, the ONNX
Model Zoo's classic CNNs): a Sum of the residual's values, a GlobalMaxPool,
TensorFlow's SAME average pool (more padding at the bottom and right, not counted)
and Caffe's LRN (AlexNet, GoogLeNet). The file is PyTorch's export of the same
computation, rewritten in those forms or exported as one LRN node, so PyTorch's
logits are the reference; ONNX Runtime runs the file as well."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
import ort_peer  # noqa: E402
from onnx import helper  # noqa: E402
from test_onnx_import import images  # noqa: E402,F401 (the fixture)
from test_onnx_import import assert_imports_as_pytorch_computes, export, int8_agreement, refused, seeded  # noqa: E402

nn = torch.nn


class ClassicForms(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.pool = nn.AvgPool2d(3, stride=2, ceil_mode=True, count_include_pad=False)  # 32 -> 16, as SAME pads
        self.a = nn.Conv2d(16, 16, 3, padding=1)
        self.b = nn.Conv2d(16, 16, 1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.stem(x)))
        x = torch.relu(x + self.a(x) + self.b(x))
        return self.fc(nn.functional.adaptive_max_pool2d(x, 1).flatten(1))


def attribute(node, name):
    return next(a for a in node.attribute if a.name == name)


def classic_forms_onnx(path, seed, average_pool_pads=(0, 0, 1, 1)):
    """ClassicForms exported, its two Adds made one Sum, its whole-image MaxPool a GlobalMaxPool
    and its ceil-mode average pool the same pool as tf2onnx writes SAME padding (or, with
    `average_pool_pads` None, as auto_pad SAME_UPPER)."""
    model = seeded(ClassicForms, seed)
    export(model, path)
    written = onnx.load(str(path))
    nodes = written.graph.node
    first, second = [n for n in nodes if n.op_type == "Add"]
    total = helper.make_node("Sum", [*first.input, next(i for i in second.input if i != first.output[0])],
                             list(second.output), name="residual_sum")
    nodes.insert(list(nodes).index(second), total)
    nodes.remove(second)
    nodes.remove(first)
    whole = next(n for n in nodes if n.op_type == "MaxPool")
    nodes.insert(list(nodes).index(whole), helper.make_node("GlobalMaxPool", list(whole.input), list(whole.output),
                                                            name="global_max"))
    nodes.remove(whole)
    pool = next(n for n in nodes if n.op_type == "AveragePool")
    attribute(pool, "ceil_mode").i = 0
    if average_pool_pads is None:
        pool.attribute.remove(attribute(pool, "pads"))
        pool.attribute.append(helper.make_attribute("auto_pad", "SAME_UPPER"))
    else:
        attribute(pool, "pads").ints[:] = average_pool_pads
    onnx.checker.check_model(written)
    onnx.save(written, str(path))
    return model


@pytest.mark.parametrize("pads", [(0, 0, 1, 1), None], ids=["pads", "auto_pad"])
def test_classic_forms_import_and_match_pytorch_and_onnx_runtime(tmp_path, octet_bin, images, pads):
    model = classic_forms_onnx(tmp_path / "classic.onnx", 61, pads)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "classic.onnx")).graph.node]
    assert "Sum" in ops and "GlobalMaxPool" in ops and "Add" not in ops and "MaxPool" not in ops, ops
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "classic.onnx", images)
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    with torch.no_grad():
        expected = model(torch.from_numpy(images[:2])).numpy()
    ort = np.concatenate([ort_peer.run(tmp_path / "classic.onnx", [images[i:i + 1]])[0] for i in range(2)])
    assert np.abs(ort - expected).max() <= 1e-4 * np.abs(expected).max()  # the rewritten file means the same


def test_classic_forms_quantize_and_follow_float(tmp_path, octet_bin):
    classic_forms_onnx(tmp_path / "classic.onnx", 62)
    assert int8_agreement(tmp_path, octet_bin, None, tmp_path / "classic.onnx") >= 0.9


def test_uncounted_end_padding_that_is_not_ceil_mode_is_refused(tmp_path, octet_bin):
    classic_forms_onnx(tmp_path / "wider.onnx", 63, average_pool_pads=(0, 0, 3, 3))  # one output more than SAME
    refused(tmp_path, octet_bin, tmp_path / "wider.onnx", "pads [0,0,3,3] with count_include_pad 0")


class Lrn(torch.autograd.Function):
    """torch's local_response_norm, exported as one ONNX LRN node (torch writes a composite of a dozen)."""

    @staticmethod
    def forward(ctx, x, size, alpha, beta, bias):
        return nn.functional.local_response_norm(x, size, alpha, beta, bias)

    @staticmethod
    def symbolic(g, x, size, alpha, beta, bias):
        return g.op("LRN", x, size_i=size, alpha_f=alpha, beta_f=beta, bias_f=bias)


class TinyAlexNet(nn.Module):
    """AlexNet's stem: conv, ReLU, LRN (AlexNet's attributes, then one whose alpha weighs the squares of
    these random activations), max pool; twice."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 5, padding=2)
        self.conv2 = nn.Conv2d(16, 24, 3, padding=1)
        self.fc = nn.Linear(24 * 7 * 7, 10)

    def forward(self, x):
        x = nn.functional.max_pool2d(Lrn.apply(torch.relu(self.conv1(x)), 5, 1e-4, 0.75, 1.0), 3, 2)
        x = nn.functional.max_pool2d(Lrn.apply(torch.relu(self.conv2(x)), 3, 0.5, 0.75, 2.0), 3, 2)
        return self.fc(x.flatten(1))


def tiny_alexnet_onnx(path, seed):
    model = seeded(TinyAlexNet, seed)
    export(model, path)
    assert sum(n.op_type == "LRN" for n in onnx.load(str(path)).graph.node) == 2
    return model


def test_lrn_imports_and_matches_pytorch_and_onnx_runtime(tmp_path, octet_bin, images):
    model = tiny_alexnet_onnx(tmp_path / "alexnet.onnx", 64)
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "alexnet.onnx", images)
    with torch.no_grad():
        expected = model(torch.from_numpy(images[:2])).numpy()
        without = model.fc(nn.functional.max_pool2d(torch.relu(model.conv2(nn.functional.max_pool2d(
            torch.relu(model.conv1(torch.from_numpy(images[:2]))), 3, 2))), 3, 2).flatten(1)).numpy()
    assert np.abs(without - expected).max() > 0.1 * np.abs(expected).max()  # the second LRN weighs
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    ort = np.concatenate([ort_peer.run(tmp_path / "alexnet.onnx", [images[i:i + 1]])[0] for i in range(2)])
    assert np.abs(ort - expected).max() <= 1e-4 * np.abs(expected).max()


def test_lrn_quantizes_and_follows_float(tmp_path, octet_bin):
    tiny_alexnet_onnx(tmp_path / "alexnet.onnx", 65)
    assert int8_agreement(tmp_path, octet_bin, None, tmp_path / "alexnet.onnx") >= 0.9


def test_an_lrn_octet_cannot_take_is_refused_by_node(tmp_path, octet_bin):
    tiny_alexnet_onnx(tmp_path / "wide.onnx", 66)
    model = onnx.load(str(tmp_path / "wide.onnx"))
    attribute(next(n for n in model.graph.node if n.op_type == "LRN"), "size").i = 17
    onnx.save(model, str(tmp_path / "wide.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "wide.onnx", "LRN", "size 17: octet's windows hold 1 to 15 channels")


class GlobalMax(nn.Module):
    """A global max pool as torch's amax writes it (ReduceMax), over height and width of a channels-first value or,
    `last`, of a channels-last one (Keras's GlobalMaxPooling2D as tf2onnx writes it)."""

    def __init__(self, last):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.fc = nn.Linear(16, 10)
        self.last = last

    def forward(self, x):
        x = torch.relu(self.conv(x))
        return self.fc(x.permute(0, 2, 3, 1).amax((1, 2)) if self.last else x.amax((2, 3)))


@pytest.mark.parametrize("last", [False, True], ids=["channels_first", "channels_last"])
def test_reduce_max_over_height_and_width_imports_and_matches_pytorch(tmp_path, octet_bin, images, last):
    model = seeded(lambda: GlobalMax(last), 67)
    export(model, tmp_path / "max.onnx")
    reduce = next(n for n in onnx.load(str(tmp_path / "max.onnx")).graph.node if n.op_type == "ReduceMax")
    assert list(attribute(reduce, "axes").ints) == ([1, 2] if last else [2, 3])
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "max.onnx", images)


def test_a_maximum_over_channels_and_height_is_refused_by_node(tmp_path, octet_bin):
    export(seeded(lambda: GlobalMax(False), 68), tmp_path / "max.onnx")
    model = onnx.load(str(tmp_path / "max.onnx"))
    attribute(next(n for n in model.graph.node if n.op_type == "ReduceMax"), "axes").ints[:] = [1, 2]
    onnx.save(model, str(tmp_path / "max.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "max.onnx", "ReduceMax", "a maximum over axes other than height and width")
