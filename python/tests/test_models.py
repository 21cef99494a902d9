"""Float checkpoints and quantized models: loading, inference, weights,
activations, and the refusal of bad inputs."""

import numpy as np
import pytest

import octet


def test_error_is_a_runtime_error_named_octet_error():
    assert issubclass(octet.Error, RuntimeError)
    assert octet.Error.__module__ == "octet" and octet.Error.__name__ == "Error"


def test_backends_include_cpu():
    assert "cpu" in octet.backends()


def test_load_checkpoint_reads_its_description(lenet, lenet_path):
    assert lenet.model == "lenet5"
    assert lenet.dataset == "fashion-mnist"
    assert lenet.path == lenet_path
    assert len(lenet.classes) == 10 and lenet.num_classes == 10
    assert lenet.classes[0] == "t-shirt/top" and lenet.classes[-1] == "ankle boot"
    assert lenet.input_shape == (1, 28, 28)
    assert len(lenet.mean) == 1 and len(lenet.std) == 1
    # The training record: 15 epochs, 61706 parameters, 91.32% on the test set.
    assert lenet.training["final_test_top1"] == pytest.approx(91.32)
    assert len(lenet.training["epochs"]) == 15 and lenet.training["parameters"] == 61706
    names = [layer["name"] for layer in lenet.layers]
    assert names[0] == lenet.layers[0]["name"] and lenet.layers[0]["op"] == "input"
    assert lenet.layers[-1]["shape"] == (10, 1, 1)
    assert "lenet5" in repr(lenet)


def test_missing_checkpoint_raises_octet_error_naming_the_file(tmp_path):
    missing = str(tmp_path / "missing.octet")
    with pytest.raises(octet.Error, match="missing.octet"):
        octet.load_checkpoint(missing)


def test_corrupt_checkpoint_raises_octet_error(tmp_path):
    path = tmp_path / "corrupt.octet"
    path.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all")
    with pytest.raises(octet.Error, match=r"corrupt\.octet: header is not valid JSON \(not an octet file\?\)"):
        octet.load_checkpoint(str(path))


def test_float_predict_classifies_fashion_mnist(lenet, test_images):
    x, labels = test_images
    logits = lenet.predict(x)
    assert logits.dtype == np.float32 and logits.shape == (500, 10)
    # The zoo model scores 91.32% on the full test set.
    assert octet.top1(logits, labels) > 85.0
    # Batching changes only the float summation order.
    np.testing.assert_allclose(lenet.predict(x, batch_size=7), logits, rtol=1e-5, atol=1e-4)


def test_float_predict_accepts_a_non_contiguous_array(lenet, test_images):
    x, _ = test_images
    strided = np.ascontiguousarray(x[:20].transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    assert not strided.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(lenet.predict(strided), lenet.predict(x[:20]))


@pytest.mark.parametrize("model_fixture", ["lenet", "quantized"])
def test_inputs_of_the_wrong_dtype_or_shape_are_refused(request, model_fixture, test_images):
    model = request.getfixturevalue(model_fixture)
    if model_fixture == "quantized":
        model = model.model
    x, _ = test_images
    with pytest.raises(TypeError, match="float32, got dtype float64"):
        model.predict(x[:4].astype(np.float64))
    with pytest.raises(TypeError, match="float32, got dtype uint8"):
        model.predict(np.zeros((4, 1, 28, 28), dtype=np.uint8))
    with pytest.raises(TypeError, match="must be a numpy array"):
        model.predict([[0.0]])
    with pytest.raises(ValueError, match=r"shape \(1, 28, 28\) but the model takes \(N, 1, 28, 28\)"):
        model.predict(x[0])
    with pytest.raises(ValueError, match=r"shape \(4, 28, 28, 1\)"):
        model.predict(np.ascontiguousarray(x[:4].transpose(0, 2, 3, 1)))
    with pytest.raises(ValueError, match="no image"):
        model.predict(x[:0])
    bad = x[:2].copy()
    bad[1, 0, 3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.predict(bad)
    with pytest.raises(ValueError, match="batch_size"):
        model.predict(x[:2], batch_size=0)


def test_checkpoint_weights_are_the_folded_float_weights(lenet):
    convs = [layer["name"] for layer in lenet.layers if layer["op"] == "conv2d"]
    linears = [layer["name"] for layer in lenet.layers if layer["op"] == "linear"]
    assert convs == ["conv1", "conv2"] and linears == ["fc1", "fc2", "fc3"]
    w = lenet.weight(convs[0])
    assert w.dtype == np.float32 and w.ndim == 4 and w.shape[1] == 1
    assert lenet.bias(convs[0]).shape == (w.shape[0],)
    assert lenet.weight(linears[-1]).shape[0] == 10
    if not lenet.batch_norm:  # nothing to fold: the stored parameter itself
        np.testing.assert_array_equal(w, lenet.params[convs[0] + ".weight"])
    with pytest.raises(octet.Error, match="no layer 'nope'.*layers with weights"):
        lenet.weight("nope")
    with pytest.raises(octet.Error, match="has no weights"):
        lenet.weight(lenet.layers[0]["name"])


def test_params_hold_every_parameter_as_arrays(lenet):
    params = lenet.params
    assert all(isinstance(v, np.ndarray) and v.dtype == np.float32 for v in params.values())
    assert {name: v.shape for name, v in params.items()} == {
        "conv1.weight": (6, 1, 5, 5), "conv1.bias": (6,), "conv2.weight": (16, 6, 5, 5), "conv2.bias": (16,),
        "fc1.weight": (120, 400), "fc1.bias": (120,), "fc2.weight": (84, 120), "fc2.bias": (84,),
        "fc3.weight": (10, 84), "fc3.bias": (10,),
    }
    assert sum(v.size for v in params.values()) == lenet.training["parameters"]


def test_float_activations_are_nchw_and_end_with_the_logits(lenet, test_images):
    x, _ = test_images
    acts = lenet.activations(x[:3])
    by_name = {layer["name"]: layer for layer in lenet.layers}
    for name, value in acts.items():
        c, h, w = by_name[name]["shape"]
        assert value.shape == ((3, c) if h == w == 1 else (3, c, h, w))
    last = lenet.layers[-1]["name"]
    np.testing.assert_allclose(acts[last], lenet.predict(x[:3]), rtol=1e-6, atol=1e-6)
    assert_flatten_is_in_torch_order(lenet.layers, acts)


def assert_flatten_is_in_torch_order(layers, acts):
    flattens = [layer for layer in layers if layer["op"] == "flatten"]
    assert flattens
    for layer in flattens:
        source = acts[layer["inputs"][0]]
        np.testing.assert_array_equal(acts[layer["name"]], source.reshape(source.shape[0], -1))


def test_quantized_model_describes_itself(quantized):
    q = quantized.model
    assert (q.model, q.dataset) == ("lenet5", "fashion-mnist")
    assert (q.method, q.granularity, q.scheme, q.weight_rounding) == ("mse", "per-channel", "octet", "nearest")
    assert q.calibration_samples == 256
    assert q.input_shape == (1, 28, 28) and q.num_classes == 10
    assert q.logit_scale.dtype == np.float32 and q.logit_scale.shape == (10,)
    input_layer = q.layers[0]
    assert input_layer["op"] == "input" and input_layer["scale"] > 0
    assert input_layer["scale"] == pytest.approx(127.0 / input_layer["amax"], rel=1e-6)


def test_int8_weights_round_the_float_weights(lenet, quantized):
    # Nearest rounding: every int8 weight is the float weight times its channel's scale, rounded.
    q = quantized.model
    for layer in (entry["name"] for entry in q.layers if entry["op"] in ("conv2d", "linear")):
        w8 = q.weight(layer)
        scale = q.weight_scale(layer)
        assert w8.dtype == np.int8 and scale.dtype == np.float32 and scale.shape == (w8.shape[0],)
        assert q.bias(layer).dtype == np.int32
        w = lenet.weight(layer)
        assert w8.shape == w.shape
        scaled = w * scale.reshape((-1,) + (1,) * (w.ndim - 1))
        np.testing.assert_array_equal(w8, np.clip(np.round(scaled), -128, 127).astype(np.int8))
        deq = q.dequantized_weight(layer)
        np.testing.assert_allclose(deq * scale.reshape((-1,) + (1,) * (w.ndim - 1)), w8, atol=1e-4)
        assert np.max(np.abs(deq - w)) <= np.max(0.5 / scale) * 1.001


def test_int8_predict_is_close_to_float(lenet, quantized, test_images):
    x, labels = test_images
    logits = quantized.model.predict(x)
    assert logits.dtype == np.int32 and logits.shape == (500, 10)
    np.testing.assert_array_equal(quantized.model.predict(x, batch_size=13), logits)
    dequantized = quantized.model.dequantize_logits(logits)
    assert dequantized.dtype == np.float32
    np.testing.assert_array_equal(dequantized, logits.astype(np.float32) * quantized.model.logit_scale)
    np.testing.assert_array_equal(quantized.model.predict(x, dequantize=True), dequantized)
    float_logits = lenet.predict(x)
    assert np.mean(dequantized.argmax(1) == float_logits.argmax(1)) > 0.95
    assert abs(octet.top1(dequantized, labels) - octet.top1(float_logits, labels)) < 2.0
    with pytest.raises(TypeError, match="one scale per class"):
        octet.top1(logits, labels)
    with pytest.raises(TypeError, match="int32"):
        quantized.model.dequantize_logits(logits.astype(np.int64))
    with pytest.raises(ValueError, match=r"expected \(N, 10\)"):
        quantized.model.dequantize_logits(logits[:, :5].copy())


def test_unknown_or_unavailable_backend_raises_octet_error(quantized, test_images):
    x, _ = test_images
    with pytest.raises(octet.Error, match="unknown backend 'tpu'"):
        quantized.model.predict(x[:2], backend="tpu")
    if "cuda-dp4a" not in octet.backends():
        with pytest.raises(octet.Error, match="cuda-dp4a"):
            quantized.model.predict(x[:2], backend="cuda-dp4a")


@pytest.mark.parametrize("backend", [b for b in octet.backends() if b != "cpu"])
def test_cuda_backends_match_the_cpu_bit_for_bit(quantized, test_images, backend):
    x, _ = test_images
    try:
        logits = quantized.model.predict(x, backend=backend)
    except octet.Error as e:  # a CUDA build on a machine without a GPU says so
        if "no usable CUDA device" not in str(e):
            raise
        pytest.skip(str(e))
    np.testing.assert_array_equal(logits, quantized.model.predict(x))


def test_int8_activations_are_int8_nchw(quantized, test_images):
    x, _ = test_images
    q = quantized.model
    acts = q.activations(x[:3])
    by_name = {layer["name"]: layer for layer in q.layers}
    assert q.layers[-1]["name"] not in acts  # the logits are int32: predict() gives them
    assert q.layers[0]["name"] in acts
    for name, value in acts.items():
        assert value.dtype == np.int8
        c, h, w = by_name[name]["shape"]
        assert value.shape == ((3, c) if h == w == 1 else (3, c, h, w))
    assert_flatten_is_in_torch_order(q.layers, acts)
    # The quantized input is rint(x * scale) in float32, clamped (common/requantize.h).
    scale = np.float32(q.layers[0]["scale"])
    expected = np.clip(np.rint(x[:3] * scale), -128, 127).astype(np.int8)
    np.testing.assert_array_equal(acts[q.layers[0]["name"]], expected)


def test_save_and_load_quantized_round_trip(quantized, test_images, tmp_path):
    x, _ = test_images
    path = str(tmp_path / "lenet5_int8.safetensors")
    quantized.model.save(path)
    loaded = octet.load_quantized(path)
    assert loaded.method == "mse" and loaded.calibration_samples == 256
    np.testing.assert_array_equal(loaded.predict(x), quantized.model.predict(x))
    for layer in (entry["name"] for entry in loaded.layers if entry["op"] in ("conv2d", "linear")):
        np.testing.assert_array_equal(loaded.weight(layer), quantized.model.weight(layer))
        np.testing.assert_array_equal(loaded.bias(layer), quantized.model.bias(layer))


def test_load_quantized_refuses_a_checkpoint(lenet_path):
    with pytest.raises(octet.Error, match=r"lenet5_fmnist\.octet: not an octet quantized model \(metadata 'format' is "
                       r"'octet-checkpoint', expected 'octet-quantized'\)"):
        octet.load_quantized(lenet_path)


def test_save_to_a_missing_folder_raises_octet_error(quantized, tmp_path):
    with pytest.raises(octet.Error, match=r"cannot open '.*/no/such/folder/model\.safetensors\.tmp-\d+' for writing"):
        quantized.model.save(str(tmp_path / "no" / "such" / "folder" / "model.safetensors"))
    assert list(tmp_path.iterdir()) == []
