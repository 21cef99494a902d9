"""`octet export --onnx` on the zoo models: ONNX's checker and strict shape
inference accept the graphs, they have the QDQ form ONNX Runtime and TensorRT
fuse (int8 weights per output channel on axis 0, int32 biases, every Conv,
Gemm, Add and pool reading dequantized int8), and evaluated by the operator
specification (qdq_reference) they predict what octet's int8 runtime does."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

import octet

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

SOURCE_DIR = pathlib.Path(os.environ.get("OCTET_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
ZOO = ["lenet5_fmnist", "lenet5_cifar10", "resnet20_cifar10"]
COMPUTE_OPS = {"Conv", "Gemm", "Add", "MaxPool", "AveragePool", "GlobalAveragePool"}


def data_dir(checkpoint):
    if checkpoint.dataset != "cifar10":
        return None
    path = os.environ.get("OCTET_CIFAR10_DIR", str(SOURCE_DIR / ".data" / "cifar-10-batches-bin"))
    if not os.path.exists(os.path.join(path, "test_batch.bin")):
        pytest.skip(f"CIFAR-10 binary files not found in {path} (tools/setup.sh writes them)")
    return path


@pytest.fixture(scope="module", params=ZOO)
def exported(request, tmp_path_factory, octet_bin):
    """(checkpoint, quantized model, onnx.ModelProto, data dir) of one zoo model."""
    checkpoint = octet.load_checkpoint(str(SOURCE_DIR / "models" / "zoo" / f"{request.param}.octet"))
    folder = tmp_path_factory.mktemp(request.param)
    directory = data_dir(checkpoint)
    quantized = octet.quantize(
        checkpoint, data_dir=directory, method="max", weight_rounding="nearest", calib_samples=128
    ).model
    quantized.save(str(folder / "int8.octet"))
    result = subprocess.run(
        [octet_bin, "export", "--quantized", str(folder / "int8.octet"), "--onnx", str(folder / "int8.onnx")],
        capture_output=True, text=True,
    )
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
    assert "checker and shape inference passed" in result.stdout
    return checkpoint, quantized, onnx.load(str(folder / "int8.onnx")), directory


def producers(graph):
    return {output: node for node in graph.node for output in node.output}


def bias_input(graph, node):
    """The dequantized bias a Conv or Gemm adds: its third input, or for a layer whose bias the
    faithful export adds after it (onnx_ops.cpp bias_after) the Add's, reshaped per channel."""
    if len(node.input) > 2:
        return node.input[2]
    made_by = producers(graph)
    (add,) = [n for n in graph.node if n.op_type == "Add" and node.output[0] in n.input]
    (bias,) = [name for name in add.input if name != node.output[0]]
    return made_by[bias].input[0] if made_by[bias].op_type == "Reshape" else bias


def test_checker_and_strict_shape_inference_accept_the_graph(exported):
    checkpoint, _, model, _ = exported
    onnx.checker.check_model(model, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    assert [o.domain for o in model.opset_import] == [""] and model.opset_import[0].version >= 13
    (output,) = inferred.graph.output
    dims = output.type.tensor_type.shape.dim
    assert output.name == "logits" and dims[0].dim_param == "batch" and dims[1].dim_value == checkpoint.num_classes
    metadata = {p.key: p.value for p in model.metadata_props}
    assert metadata["model"] == checkpoint.model and metadata["dataset"] == checkpoint.dataset


def test_weights_are_int8_per_output_channel_and_biases_int32(exported):
    """A Conv's bias is an int32 DequantizeLinear at the input's scale times the weight's, as QLinearConv needs;
    a Gemm's the float that DequantizeLinear gives (the faithful export's: ORT fuses no QGemm that saturates)."""
    _, quantized, model, _ = exported
    initializers = {t.name: t for t in model.graph.initializer}
    made_by = producers(model.graph)
    weighted = [n for n in model.graph.node if n.op_type in ("Conv", "Gemm")]
    assert len(weighted) == sum(layer["op"] in ("conv2d", "linear") for layer in quantized.layers)
    assert {n.op_type for n in weighted} == {"Conv", "Gemm"}
    for node in weighted:
        weight = made_by[node.input[1]]
        assert weight.op_type == "DequantizeLinear" and [a.i for a in weight.attribute if a.name == "axis"] == [0]
        assert initializers[weight.input[0]].data_type == onnx.TensorProto.INT8
        channels = initializers[weight.input[0]].dims[0]
        weight_scale = numpy_helper.to_array(initializers[weight.input[1]])
        source = made_by[node.input[0]]
        while source.op_type == "Flatten":
            source = made_by[source.input[0]]
        assert source.op_type == "DequantizeLinear"
        input_scale = numpy_helper.to_array(initializers[source.input[1]])
        if node.op_type == "Gemm":
            bias = initializers[node.input[2]]
            assert bias.data_type == onnx.TensorProto.FLOAT and bias.dims == [channels]
            levels = numpy_helper.to_array(bias).astype(np.float64) / (input_scale * weight_scale)
            assert np.abs(levels - np.round(levels)).max() <= 1e-3 + 1e-6 * np.abs(levels).max(), levels
            continue
        bias = made_by[bias_input(model.graph, node)]
        assert bias.op_type == "DequantizeLinear" and [a.i for a in bias.attribute if a.name == "axis"] == [0]
        assert initializers[bias.input[0]].data_type == onnx.TensorProto.INT32
        bias_scale = numpy_helper.to_array(initializers[bias.input[1]])
        assert weight_scale.shape == (channels,) == bias_scale.shape
        np.testing.assert_allclose(bias_scale, input_scale * weight_scale, rtol=1e-6)


def test_every_compute_op_reads_dequantized_int8_and_its_result_is_quantized(exported):
    _, _, model, _ = exported
    made_by = producers(model.graph)
    consumers = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    for node in model.graph.node:
        if node.op_type not in COMPUTE_OPS:
            continue
        data_inputs = node.input[:1] if node.op_type in ("Conv", "Gemm") else node.input
        if node.op_type == "Add":  # a residual (or a bias) added to a conv's float result, as octet does
            bias_add = any(made_by[name].op_type == "Reshape" for name in node.input)
            data_inputs = [name for name in node.input if made_by[name].op_type not in ("Conv", "Gemm", "Reshape")]
            assert len(data_inputs) >= 1 or bias_add
        for name in data_inputs:
            source = made_by[name]
            while source.op_type in ("Flatten", "Slice", "Pad"):  # moves int8 values, computes nothing
                source = made_by[source.input[0]]
            assert source.op_type == "DequantizeLinear", f"{node.name} reads {name} from {source.op_type}"
        # Up to the next QuantizeLinear only a fused residual Add or ReLU may follow.
        result = node.output[0]
        while result != "logits":
            (next_node,) = consumers[result]
            if next_node.op_type == "QuantizeLinear":
                break
            assert next_node.op_type in ("Add", "Relu"), f"{node.name} feeds {next_node.op_type} unquantized"
            result = next_node.output[0]


def test_qdq_graph_predicts_what_octet_int8_predicts(exported):
    """QDQ rounds in float where octet requantizes in fixed point, so a few
    values may differ by one step; the predictions must still agree."""
    qdq_reference = pytest.importorskip("qdq_reference")
    checkpoint, quantized, model, directory = exported
    images, labels = octet.load_dataset(checkpoint.dataset, directory, "test")
    count = 1000 if checkpoint.model == "lenet5" else 200
    x = octet.normalize(images[:count], checkpoint.mean, checkpoint.std)
    onnx_logits = qdq_reference.run(model, {"input": x})["logits"]
    octet_logits = quantized.predict(x, dequantize=True)
    agreement = 100.0 * np.mean(onnx_logits.argmax(1) == octet_logits.argmax(1))
    spread = np.abs(octet_logits).max()
    difference = np.abs(onnx_logits - octet_logits)
    print(
        f"{checkpoint.model}/{checkpoint.dataset}: {count} images, ONNX QDQ top-1 {octet.top1(onnx_logits, labels[:count]):.2f}%, "
        f"octet int8 {octet.top1(octet_logits, labels[:count]):.2f}%, agreement {agreement:.2f}%, logit difference "
        f"max {difference.max():.4g} mean {difference.mean():.4g} (logits up to {spread:.3g})"
    )
    assert agreement >= 98.0
    assert difference.mean() < 0.02 * spread


def test_export_refuses_a_float_checkpoint_and_writes_nothing(tmp_path, octet_bin):
    float_checkpoint = str(SOURCE_DIR / "models" / "zoo" / "lenet5_fmnist.octet")
    result = subprocess.run(
        [octet_bin, "export", "--quantized", float_checkpoint, "--onnx", str(tmp_path / "out.onnx")],
        capture_output=True, text=True,
    )
    assert result.returncode != 0 and "lenet5_fmnist.octet" in result.stderr
    assert list(tmp_path.iterdir()) == []
