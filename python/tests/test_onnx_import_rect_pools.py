"""`octet import` of pools whose window differs down and across, on images that
are not square: a keyword-spotting CNN over one-channel 40x101 log-mel
spectrograms pools over frequency only (MaxPool2d((3, 1), stride (2, 1))), over
time only ((1, 3), stride (1, 2)), averages 2x3 windows with ceil_mode and
uncounted padding, and ends in a global max pool (a 10x51 MaxPool as torch
writes it, or a GlobalMaxPool) and a ReduceMax (torch.amax) of a 10x51 image. PyTorch's logits are the reference;
ONNX Runtime runs the file and octet's int8 export as well."""

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import seeded  # noqa: E402
from torchscript_onnx import torchscript_export  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import imported, refused, varied_inputs  # noqa: E402

nn = torch.nn
SPECTROGRAM = (1, 40, 101)


class KeywordSpotter(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.pool1 = nn.MaxPool2d((3, 1), stride=(2, 1), padding=(1, 0))
        self.conv2 = nn.Conv2d(16, 24, 3, padding=1)
        self.pool2 = nn.MaxPool2d((1, 3), stride=(1, 2), padding=(0, 1))
        self.conv3 = nn.Conv2d(24, 32, 3, padding=1)
        self.pool3 = nn.AvgPool2d((2, 3), stride=(2, 1), padding=(0, 1), ceil_mode=True, count_include_pad=False)
        self.conv4 = nn.Conv2d(32, 32, 1)
        self.conv5 = nn.Conv2d(32, 16, 1)
        self.fc = nn.Linear(48, 12)

    def forward(self, x):
        x = self.pool1(torch.relu(self.conv1(x)))
        x = self.pool2(torch.relu(self.conv2(x)))
        x = self.pool3(torch.relu(self.conv3(x)))
        peak = nn.functional.adaptive_max_pool2d(torch.relu(self.conv4(x)), 1)
        loudest = torch.amax(torch.relu(self.conv5(x)), dim=(2, 3), keepdim=True)
        return self.fc(torch.cat([peak, loudest], 1).flatten(1))


@pytest.fixture(scope="module")
def spectrograms():
    return varied_inputs(12, 64, SPECTROGRAM)


def exported(path, seed):
    model = seeded(KeywordSpotter, seed)
    torchscript_export(model, torch.zeros(1, *SPECTROGRAM), path, opset_version=13, input_names=["mel"],
                       output_names=["logits"], dynamic_axes={"mel": {0: "n"}, "logits": {0: "n"}})
    return model


def as_global_max_pool(path):
    """The file with torch's whole-image MaxPool (adaptive_max_pool2d(x, 1) of a known size) a GlobalMaxPool."""
    written = onnx.load(str(path))
    whole = next(n for n in written.graph.node if n.op_type == "MaxPool" and list(n.attribute[0].ints) == [10, 51])
    del whole.attribute[:]
    whole.op_type = "GlobalMaxPool"
    onnx.save(written, str(path))


@pytest.mark.parametrize("global_form", ["MaxPool", "GlobalMaxPool"])
def test_rectangular_pools_import_and_match_pytorch_and_onnx_runtime(tmp_path, octet_bin, spectrograms, global_form):
    model = exported(tmp_path / "kws.onnx", 81)
    if global_form == "GlobalMaxPool":
        as_global_max_pool(tmp_path / "kws.onnx")
    nodes = onnx.load(str(tmp_path / "kws.onnx")).graph.node
    pools = [(n.op_type, {a.name: list(a.ints) for a in n.attribute if a.ints})
             for n in nodes if "Pool" in n.op_type or n.op_type == "ReduceMax"]
    whole = ("MaxPool", [10, 51], [10, 51]) if global_form == "MaxPool" else ("GlobalMaxPool", None, None)
    assert [(op, a.get("kernel_shape"), a.get("strides")) for op, a in pools] == [
        ("MaxPool", [3, 1], [2, 1]), ("MaxPool", [1, 3], [1, 2]), ("AveragePool", [2, 3], [2, 1]), whole,
        ("ReduceMax", None, None)], pools
    got = imported(octet_bin, tmp_path / "kws.onnx", tmp_path / "kws.octet").predict(spectrograms)
    assert_matches_pytorch_and_onnx_runtime(got, model, tmp_path / "kws.onnx", spectrograms)


def test_rectangular_pools_quantize_follow_float_and_export(tmp_path, octet_bin, spectrograms):
    exported(tmp_path / "kws.onnx", 82)
    imported(octet_bin, tmp_path / "kws.onnx", tmp_path / "kws.octet")
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "kws.octet", spectrograms, spectrograms)


def test_unequal_ends_of_a_max_pool_direction_are_refused(tmp_path, octet_bin):
    exported(tmp_path / "kws.onnx", 83)
    written = onnx.load(str(tmp_path / "kws.onnx"))
    pool = next(n for n in written.graph.node if n.op_type == "MaxPool")
    next(a for a in pool.attribute if a.name == "pads").ints[:] = [1, 0, 0, 0]
    onnx.save(written, str(tmp_path / "uneven.onnx"))
    refused(octet_bin, tmp_path / "uneven.onnx", tmp_path / "uneven.octet", pool.name, "pads [1,0,0,0] of a max pool",
            "both ends of each direction alike")
