"""`octet import` of float16, bfloat16 and float64 ONNX models (`model.half()` exports,
onnxconverter-common's float16 conversion with or without keep_io_types): their weights are
read exactly (float16 and bfloat16 from raw_data or int32_data) or rounded (float64) to
float32, Casts between floating types pass, and octet computes in float32. So such a file
imports to the same checkpoint as the float32 file holding its weights' values, and says
which types it widened; a 16-bit weight that is not finite is refused naming it."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
import ort_peer  # noqa: E402
from float_types import retyped  # noqa: E402
from onnx import TensorProto, numpy_helper  # noqa: E402
from test_onnx_import import export, logits_of, random_model, refused, run_import  # noqa: E402

import octet  # noqa: E402


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(31).normal(size=(32, 3, 32, 32)).astype(np.float32)


@pytest.mark.parametrize("to, keep_io_types", [(TensorProto.FLOAT16, False), (TensorProto.FLOAT16, True),
                                               (TensorProto.BFLOAT16, False), (TensorProto.DOUBLE, False)],
                         ids=["float16", "float16_keep_io_types", "bfloat16", "float64"])
def test_a_narrower_or_wider_float_model_imports_as_float32_of_its_values(tmp_path, octet_bin, images, to,
                                                                          keep_io_types):
    model = random_model(41)
    export(model, tmp_path / "m.onnx", dynamic_axes={"image": {0: "n"}})
    retyped(tmp_path / "m.onnx", to, keep_io_types, tmp_path / "narrow.onnx", tmp_path / "rounded.onnx")
    result = run_import(octet_bin, tmp_path / "narrow.onnx", tmp_path / "narrow.octet", "--json",
                        str(tmp_path / "n.json"))
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
    name = TensorProto.DataType.Name(to)
    assert f"its {name} values computed in float32" in result.stdout, result.stdout
    assert json.loads((tmp_path / "n.json").read_text())["computed_in_float32"] == [name]
    assert run_import(octet_bin, tmp_path / "rounded.onnx", tmp_path / "rounded.octet").returncode == 0
    got = octet.load_checkpoint(str(tmp_path / "narrow.octet")).predict(images)
    same_values = octet.load_checkpoint(str(tmp_path / "rounded.octet")).predict(images)
    assert np.array_equal(got, same_values)
    # and near the float32 model's, by the rounding of its weights (bfloat16: 8 bits)
    expected = logits_of(model, images)
    bound = {TensorProto.FLOAT16: 5e-3, TensorProto.BFLOAT16: 5e-2, TensorProto.DOUBLE: 1e-4}[to]
    assert np.abs(got - expected).max() <= bound * np.abs(expected).max(), np.abs(got - expected).max()
    if keep_io_types and ort_peer.missing() is None:  # ONNX Runtime runs the float16 file itself (float32 in and out)
        probabilities = ort_peer.run(str(tmp_path / "narrow.onnx"), [images])[0]  # the file ends in a softmax
        ours = np.exp(got - got.max(1, keepdims=True))
        ours /= ours.sum(1, keepdims=True)
        assert np.abs(ours - probabilities).max() <= 2e-3, np.abs(ours - probabilities).max()


def test_a_float16_weight_that_is_not_finite_is_refused(tmp_path, octet_bin):
    export(random_model(42), tmp_path / "m.onnx")
    retyped(tmp_path / "m.onnx", TensorProto.FLOAT16, False, tmp_path / "half.onnx", tmp_path / "rounded.onnx")
    model = onnx.load(str(tmp_path / "half.onnx"))
    weight = next(t for t in model.graph.initializer if t.name == "fc1.weight")
    values = numpy_helper.to_array(weight).copy()
    values[2, 3] = np.inf
    weight.CopyFrom(numpy_helper.from_array(values, "fc1.weight"))
    onnx.save(model, str(tmp_path / "inf.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "inf.onnx", "fc1.weight", "NaN or infinite")
    model = onnx.load(str(tmp_path / "half.onnx"))
    weight = next(t for t in model.graph.initializer if t.name == "fc1.weight")
    weight.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight), "fc1.weight"))  # as raw_data
    weight.raw_data = weight.raw_data[:-2]
    onnx.save(model, str(tmp_path / "short.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "short.onnx", "fc1.weight", "16-bit floats")
