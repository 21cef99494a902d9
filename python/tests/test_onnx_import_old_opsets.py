"""`octet import` of models at opsets 7 to 10 (the ONNX Model Zoo's older files,
torch.onnx.export at an old opset_version): ONNX's checker passes the file, ONNX's
version converter takes it to opset 11, and it imports as a file written at 11 would;
older opsets, and files the checker refuses, are refused naming the file."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402
from test_onnx_import import export, logits_of, random_model, refused, run_import  # noqa: E402

import octet  # noqa: E402

nn = torch.nn


class Clipped(nn.Module):
    """ReLU6 and a Pad: attributes before opset 11 (Clip's min and max, Pad's pads), inputs from 11."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2)
        self.fc = nn.Linear(8, 10)
        self.softmax = False

    def forward(self, x):
        y = nn.functional.relu6(self.conv(nn.functional.pad(x, (1, 1, 1, 1))) * 3)
        return self.fc(y.mean((2, 3)))


class CeilPools(nn.Module):
    """Max pools with ceil_mode (SqueezeNet's and GoogLeNet's): before opset 10 torch writes them as more padding
    at the bottom and right."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pool1 = nn.MaxPool2d(3, stride=2, ceil_mode=True)  # 32 -> 16 (15 without ceil_mode)
        self.pool2 = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)  # 16 -> 9
        self.pool3 = nn.MaxPool2d(2, stride=2, ceil_mode=True)  # 9 -> 5
        self.fc = nn.Linear(8 * 5 * 5, 10)
        self.softmax = False

    def forward(self, x):
        y = self.pool3(self.pool2(self.pool1(torch.tanh(self.conv(x)))))
        return self.fc(torch.flatten(y, 1))


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(51).normal(size=(16, 3, 32, 32)).astype(np.float32)


@pytest.mark.parametrize("opset", [7, 8, 9, 10])
@pytest.mark.parametrize("make", [lambda: random_model(52), lambda: Clipped().eval(), lambda: CeilPools().eval()],
                         ids=["small_cnn", "clip_pad", "ceil_pools"])
def test_an_old_opset_is_converted_and_matches_pytorch(tmp_path, octet_bin, images, opset, make):
    torch.manual_seed(53)
    model = make()
    export(model, tmp_path / "old.onnx", opset=opset)
    assert onnx.load(str(tmp_path / "old.onnx")).opset_import[0].version == opset
    result = run_import(octet_bin, tmp_path / "old.onnx", tmp_path / "old.octet", "--json", str(tmp_path / "i.json"))
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
    assert f"opset {opset}, converted to 11 by ONNX's version converter" in result.stdout, result.stdout
    summary = json.loads((tmp_path / "i.json").read_text())
    assert summary["upgraded_from_opset"] == opset and summary["opset"] == 11, summary
    got = octet.load_checkpoint(str(tmp_path / "old.octet")).predict(images)
    expected = logits_of(model, images)
    assert np.abs(got - expected).max() <= 1e-4 * np.abs(expected).max(), np.abs(got - expected).max()


def test_an_old_file_that_onnx_checker_refuses_is_refused(tmp_path, octet_bin):
    export(random_model(54), tmp_path / "old.onnx", opset=9)
    model = onnx.load(str(tmp_path / "old.onnx"))
    model.graph.node.insert(0, helper.make_node("Relu", ["nowhere"], ["unread"], name="dangling"))
    onnx.save(model, str(tmp_path / "dangling.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "dangling.onnx", "dangling.onnx", "opset 9",
            "ONNX's checker refuses the file", "nowhere")
    model = onnx.load(str(tmp_path / "old.onnx"))
    model.graph.output[0].name = "unwritten"  # the checker lets it pass; ONNX 1.12's converter crashed on it
    onnx.save(model, str(tmp_path / "unwritten.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "unwritten.onnx", "the graph's output 'unwritten' is written by no node")


def test_end_padding_of_a_max_pool_that_is_not_ceil_mode_is_refused(tmp_path, octet_bin):
    torch.manual_seed(55)
    export(CeilPools().eval(), tmp_path / "m.onnx", opset=9)
    model = onnx.load(str(tmp_path / "m.onnx"))
    pool = next(n for n in model.graph.node if n.op_type == "MaxPool")
    pads = next(a for a in pool.attribute if a.name == "pads")
    top, left, bottom, right = pads.ints
    assert top == left == 0 and bottom == right > 0, list(pads.ints)  # ceil_mode as torch wrote it
    pads.ints[:] = [0, 0, bottom + 2, right + 2]  # one output more than ceil_mode gives
    onnx.save(model, str(tmp_path / "wider.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "wider.onnx", f"pads [0,0,{bottom + 2},{right + 2}]",
            "of a max pool: octet pads both ends of each direction alike")
