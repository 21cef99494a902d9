"""Models of several outputs: a detection net's heads at two scales (boxes from a conv, scores through a sigmoid),
a classifier beside them and a feature map the heads also read, as a user's own CNN returns them. `octet import`
keeps every output in ONNX's order; octet's float outputs are PyTorch's and ONNX Runtime's; int8 follows float
output by output (`octet eval`'s per-output SQNR); `octet predict --outputs` writes what the Python module returns;
the int8 export gives ONNX Runtime the same outputs; what scores one output (labels, a float top-1, class
predictions) is refused by name."""

import json
import subprocess

import numpy as np
import octet
import ort_peer
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from torchscript_onnx import torchscript_export  # noqa: E402
from unlabelled_import import imported, randomise_batch_norms, varied_inputs  # noqa: E402

nn = torch.nn
IMAGE = (3, 16, 20)
OUTPUTS = ["boxes", "scores", "kind", "features"]


def conv_bn(c_in, c_out, stride=1):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1), nn.BatchNorm2d(c_out), nn.ReLU())


class Heads(nn.Module):
    """Boxes at half the input's size, scores (a sigmoid) at a quarter, a classifier of the pooled quarter-size
    features, and those features themselves (read by the scores and the classifier too)."""

    def __init__(self):
        super().__init__()
        self.stem, self.fine, self.coarse = conv_bn(3, 16), conv_bn(16, 32, 2), conv_bn(32, 32, 2)
        self.boxes, self.scores, self.fc = nn.Conv2d(32, 4, 1), nn.Conv2d(32, 3, 3, 1, 1), nn.Linear(32, 5)

    def forward(self, x):
        fine = self.fine(self.stem(x))
        coarse = self.coarse(fine)
        return self.boxes(fine), torch.sigmoid(self.scores(coarse)), self.fc(coarse.mean((2, 3))), coarse


def export(model, path, outputs):
    torch.manual_seed(0)
    torchscript_export(randomise_batch_norms(model.eval()), torch.zeros(1, *IMAGE), path, opset_version=13,
                       input_names=["image"], output_names=outputs,
                       dynamic_axes={"image": {0: "n"}, **{name: {0: "n"} for name in outputs}})
    return model


@pytest.fixture(scope="module")
def images():
    return varied_inputs(55, 48, IMAGE)


@pytest.fixture(scope="module")
def heads(tmp_path_factory, octet_bin, images):
    """The exported Heads, its octet checkpoint and int8 model (max, calibrated on the first 32 images)."""
    folder = tmp_path_factory.mktemp("heads")
    torch.manual_seed(5)
    model = export(Heads(), folder / "heads.onnx", OUTPUTS)
    imported(octet_bin, folder / "heads.onnx", folder / "heads.octet")
    np.save(folder / "calibration.npy", images[:32])
    subprocess.run([octet_bin, "quantize", "--checkpoint", str(folder / "heads.octet"), "--calib-data",
                    str(folder / "calibration.npy"), "--method", "max", "-o", str(folder / "heads.int8")],
                   capture_output=True, text=True, check=True)
    np.save(folder / "images.npy", images)
    return model, folder


def test_every_output_imports_in_order_and_matches_pytorch_and_onnx_runtime(heads, images):
    model, folder = heads
    ours = octet.load_checkpoint(str(folder / "heads.octet")).predict(images)
    with torch.no_grad():
        expected = [t.numpy() for t in model(torch.from_numpy(images))]
    assert isinstance(ours, tuple) and len(ours) == 4
    names = ["boxes", "scores_logits", "fc", "features_logits"]
    listed = octet.load_checkpoint(str(folder / "heads.octet")).outputs
    assert [o["name"] for o in listed] == names and [o["shape"] for o in listed] == [a.shape[1:] for a in ours]
    assert octet.load_quantized(str(folder / "heads.int8")).outputs == listed
    for got, want in zip(ours, expected):
        assert got.shape == want.shape
        largest = np.abs(want).max()
        assert np.abs(got - want).max() <= 1e-4 * largest, (np.abs(got - want).max(), largest)
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    for got, theirs in zip(ours, ort_peer.run(str(folder / "heads.onnx"), [images])):
        assert np.abs(got - theirs).max() <= 1e-4 * np.abs(theirs).max()


def test_int8_follows_float_output_by_output(heads, images, octet_bin):
    _, folder = heads
    floats = octet.load_checkpoint(str(folder / "heads.octet")).predict(images)
    quantized = octet.load_quantized(str(folder / "heads.int8"))
    int8 = quantized.predict(images, dequantize=True)
    raw = quantized.predict(images)
    assert len(int8) == 4 and all(r.dtype == np.int32 for r in raw)
    with pytest.raises(octet.Error, match="4 outputs, each its own logit scale"):
        quantized.dequantize_logits(raw[2])
    for f, q in zip(floats, int8):
        sqnr = 10 * np.log10((f ** 2).sum() / ((f - q) ** 2).sum())
        assert sqnr > 25, sqnr  # 34 to 52 dB here
    result = subprocess.run([octet_bin, "eval", "--checkpoint", str(folder / "heads.octet"), "--quantized",
                             str(folder / "heads.int8"), "--eval-data", str(folder / "images.npy"), "--json", "-"],
                            capture_output=True, text=True, check=True)
    rows = [layer for layer in json.loads(result.stdout)["layers"] if layer["op"] == "output"]
    assert [row["name"] for row in rows] == ["boxes", "scores_logits", "fc", "features_logits"]
    for row, f, q in zip(rows, floats, int8):
        assert row["sqnr_db"] == pytest.approx(10 * np.log10((f.astype(np.float64) ** 2).sum() /
                                                             ((f.astype(np.float64) - q) ** 2).sum()), abs=0.05)


def test_predict_writes_every_output_as_the_module_returns_it(heads, images, octet_bin, tmp_path):
    _, folder = heads
    result = subprocess.run([octet_bin, "predict", "--quantized", str(folder / "heads.int8"), "--checkpoint",
                             str(folder / "heads.octet"), "--eval-data", str(folder / "images.npy"), "--outputs",
                             str(tmp_path / "out"), "--json", "-"], capture_output=True, text=True, check=True)
    outputs = json.loads(result.stdout)["outputs"]
    quantized = octet.load_quantized(str(folder / "heads.int8"))
    int8 = quantized.predict(images, dequantize=True)
    floats = octet.load_checkpoint(str(folder / "heads.octet")).predict(images)
    assert [o["name"] for o in outputs] == [o["name"] for o in quantized.outputs]
    assert [o["shape"] for o in outputs] == [list(a.shape) for a in int8]
    for k, output in enumerate(outputs):
        assert output["int8"] == str(tmp_path / "out" / f"int8_output{k}.npy")
        np.testing.assert_array_equal(np.load(output["int8"]), int8[k])
        np.testing.assert_array_equal(np.load(output["float"]), floats[k])


def test_the_int8_export_returns_every_output_to_onnx_runtime(heads, images, octet_bin):
    _, folder = heads
    subprocess.run([octet_bin, "export", "--quantized", str(folder / "heads.int8"), "--onnx",
                    str(folder / "q.onnx")], capture_output=True, text=True, check=True)
    assert [o.name for o in onnx.load(str(folder / "q.onnx")).graph.output] == [f"logits_{k}" for k in range(4)]
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    ours = octet.load_quantized(str(folder / "heads.int8")).predict(images[:16], dequantize=True)
    theirs = ort_peer.run(str(folder / "q.onnx"), [images[:16]])
    for got, want in zip(ours, theirs):
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 5e-3 * np.abs(got).max(), np.abs(got - want).max()


def test_what_scores_one_output_is_refused_by_name(heads, octet_bin, tmp_path):
    _, folder = heads
    np.save(tmp_path / "labels.npy", np.zeros(48, dtype=np.int64))
    run = [octet_bin, "predict", "--quantized", str(folder / "heads.int8"), "--eval-data",
           str(folder / "images.npy")]
    result = subprocess.run(run, capture_output=True, text=True)
    assert result.returncode == 1 and "has 4 outputs (from 'boxes'): --outputs FOLDER" in result.stderr
    result = subprocess.run(run + ["--outputs", str(tmp_path / "o"), "--eval-labels", str(tmp_path / "labels.npy")],
                            capture_output=True, text=True)
    assert result.returncode == 1 and "labels score one output" in result.stderr
    assert not (tmp_path / "o").exists()
    result = subprocess.run([octet_bin, "eval", "--checkpoint", str(folder / "heads.octet"), "--eval-data",
                             str(folder / "images.npy"), "--eval-labels", str(tmp_path / "labels.npy")],
                            capture_output=True, text=True)
    assert result.returncode == 1 and "has 4 outputs, and a float top-1 scores one" in result.stderr
    result = subprocess.run([octet_bin, "import", str(folder / "heads.onnx"), "--dataset", "cifar10", "-o",
                             str(tmp_path / "c.octet")], capture_output=True, text=True)
    assert result.returncode == 1 and "the graph has 4 outputs, and a dataset's labels score one" in result.stderr


def test_summary_lists_the_outputs(heads, octet_bin):
    _, folder = heads
    result = subprocess.run([octet_bin, "summary", "--checkpoint", str(folder / "heads.octet"), "--json", "-"],
                            capture_output=True, text=True, check=True)
    outputs = json.loads(result.stdout)["outputs"]
    assert outputs == [{"name": "boxes", "shape": [4, 8, 10]}, {"name": "scores_logits", "shape": [3, 4, 5]},
                       {"name": "fc", "shape": [5, 1, 1]}, {"name": "features_logits", "shape": [32, 4, 5]}]


def test_a_layer_that_no_output_reads_stays_before_the_outputs(heads, octet_bin, images, tmp_path):
    """PyTorch's exporter drops what no output reads; another writer may leave it (a Relu of the first conv's,
    last in the file): the outputs are still the graph's last nodes, in order, and return what they did."""
    _, folder = heads
    model = onnx.load(str(folder / "heads.onnx"))
    model.graph.node.append(onnx.helper.make_node("Relu", [model.graph.node[0].output[0]], ["dangling"]))
    onnx.save(model, str(tmp_path / "dead.onnx"))
    ours = imported(octet_bin, tmp_path / "dead.onnx", tmp_path / "dead.octet").predict(images)
    for got, want in zip(ours, octet.load_checkpoint(str(folder / "heads.octet")).predict(images)):
        np.testing.assert_array_equal(got, want)
