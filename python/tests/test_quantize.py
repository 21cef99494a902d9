"""Calibration and quantization from Python: the options are the command
line's, the results are the command line's, and the int8 logits equal those
`octet predict` prints for the same images."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import octet

SOURCE_DIR = pathlib.Path(os.environ.get("OCTET_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def run_cli(octet_bin, *args):
    result = subprocess.run([octet_bin, *args], capture_output=True, text=True)
    assert result.returncode == 0, f"octet {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


def weighted_layers(model):
    return [layer["name"] for layer in model.layers if layer["op"] in ("conv2d", "linear")]


def assert_same_quantized_model(a, b):
    assert (a.method, a.granularity, a.scheme, a.weight_rounding, a.calibration_samples) == (
        b.method,
        b.granularity,
        b.scheme,
        b.weight_rounding,
        b.calibration_samples,
    )
    assert [(l["name"], l["op"], l["scale"], l["amax"], l["method"]) for l in a.layers] == [
        (l["name"], l["op"], l["scale"], l["amax"], l["method"]) for l in b.layers
    ]
    assert a.float_nodes == b.float_nodes
    for layer in set(weighted_layers(a)) - set(a.float_nodes):
        np.testing.assert_array_equal(a.weight(layer), b.weight(layer))
        np.testing.assert_array_equal(a.weight_scale(layer), b.weight_scale(layer))
        np.testing.assert_array_equal(a.bias(layer), b.bias(layer))
    np.testing.assert_array_equal(a.logit_scale, b.logit_scale)


# (Python keyword options, the same options on the command line)
OPTION_CASES = [
    ({}, []),  # the defaults: auto amax, per-channel, octet scheme, GPTQ rounding
    (
        {"method": "max", "granularity": "per-tensor", "weight_rounding": "nearest"},
        ["--method", "max", "--granularity", "per-tensor", "--weight-rounding", "nearest"],
    ),
    ({"method": "percentile", "percentile": 99.9, "scheme": "lab"}, ["--method", "percentile", "--percentile", "99.9", "--scheme", "lab"]),
    ({"method": "sigma3"}, ["--method", "sigma3"]),
    ({"method": "mse"}, ["--method", "mse"]),
    ({"method": "auto-global", "weight_rounding": "nearest"}, ["--method", "auto-global", "--weight-rounding", "nearest"]),
    ({"method": "max", "float_nodes": ["conv2", "fc1"]}, ["--method", "max", "--float-nodes", "conv2,fc1"]),
    (
        {"method": "max", "granularity": "per-tensor", "equalize": True, "bias_correction": True},
        ["--method", "max", "--granularity", "per-tensor", "--equalize", "--bias-correction"],
    ),
]


@pytest.mark.parametrize("kwargs,cli_args", OPTION_CASES, ids=["defaults", "max-per-tensor-nearest", "percentile-lab", "sigma3", "mse", "auto-global", "max-float-nodes", "equalize-bias-correction"])
def test_quantize_matches_octet_quantize(lenet, lenet_path, octet_bin, tmp_path, kwargs, cli_args):
    result = octet.quantize(lenet, calib_samples=128, **kwargs)
    cli_path = str(tmp_path / "cli.safetensors")
    cli = run_cli(octet_bin, "quantize", "--checkpoint", lenet_path, "--calib-samples", "128", *cli_args, "-o", cli_path)
    assert_same_quantized_model(result.model, octet.load_quantized(cli_path))
    assert ("every tensor takes" in cli.stderr) == (kwargs.get("method") == "auto-global")
    assert result.calibration_samples == 128
    expected_method = kwargs.get("method", "auto")
    assert result.model.method == expected_method
    assert result.model.granularity == kwargs.get("granularity", "per-channel")
    assert result.model.float_nodes == kwargs.get("float_nodes", [])
    for layer in result.model.float_nodes:
        with pytest.raises(octet.Error, match=f"layer '{layer}' runs in float"):
            result.model.weight(layer)
    assert (result.model.int8_mac_share < 1) == ("float_nodes" in kwargs)
    assert (result.model.equalized, result.model.bias_corrected) == (
        kwargs.get("equalize", False),
        kwargs.get("bias_correction", False),
    )


def test_int8_logits_equal_octet_predict(lenet, lenet_path, quantized, fmnist_test, octet_bin, tmp_path):
    model_path = str(tmp_path / "lenet5_int8.safetensors")
    quantized.model.save(model_path)
    out = tmp_path / "predict.json"
    printed = run_cli(octet_bin, "predict", "--quantized", model_path, "--checkpoint", lenet_path, "--limit", "300",
                      "--backend", "cpu", "--json", str(out))
    assert "int8 top-1" in printed.stdout
    cli = json.loads(out.read_text())
    images, labels = fmnist_test
    q = octet.load_quantized(model_path)
    x = octet.normalize(images[:300], q.mean, q.std)
    logits = q.predict(x)
    assert cli["images"] == 300 and cli["backend"] == "cpu"
    np.testing.assert_array_equal(np.array(cli["labels"]), labels[:300])
    np.testing.assert_array_equal(np.array(cli["int8_logits"], dtype=np.int64), logits)
    np.testing.assert_array_equal(np.array(cli["logit_scale"], dtype=np.float32), q.logit_scale)
    dequantized = q.dequantize_logits(logits)
    np.testing.assert_array_equal(np.array(cli["int8_predictions"]), dequantized.argmax(1))
    assert cli["int8_top1"] == pytest.approx(octet.top1(dequantized, labels[:300]))
    float_logits = lenet.predict(x)
    np.testing.assert_allclose(np.array(cli["float_logits"], dtype=np.float32), float_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.array(cli["float_predictions"]), float_logits.argmax(1))


def test_bad_options_raise_the_command_lines_messages(lenet):
    with pytest.raises(octet.Error, match="unknown .*'bogus'.*max.*entropy"):
        octet.quantize(lenet, method="bogus")
    with pytest.raises(octet.Error, match="per-channel or per-tensor"):
        octet.quantize(lenet, granularity="per-layer")
    with pytest.raises(octet.Error, match="unknown scheme 'tf'"):
        octet.quantize(lenet, scheme="tf", calib_samples=16)
    with pytest.raises(octet.Error, match="unknown weight rounding 'stochastic'"):
        octet.quantize(lenet, weight_rounding="stochastic", calib_samples=16)
    with pytest.raises(octet.Error, match="calib-samples must be positive"):
        octet.quantize(lenet, calib_samples=0)
    with pytest.raises(octet.Error, match="no node 'conv9'"):
        octet.quantize(lenet, float_nodes=["conv9"], calib_samples=16)
    with pytest.raises(octet.Error, match="no-such-dir"):
        octet.quantize(lenet, data_dir="/no-such-dir", calib_samples=16)
    with pytest.raises(TypeError, match=r"quantize\(\): incompatible function arguments"):
        octet.quantize(lenet, "max")  # options are keywords only


def test_points_hold_histograms_ranges_and_chosen_amax(quantized):
    points = quantized.points
    q = quantized.model
    own_scale = [l["name"] for l in q.layers if l["method"] not in ("", "inherited")]
    assert [p["name"] for p in points] == own_scale
    assert points[0]["op"] == "input"
    shapes = {l["name"]: l["shape"] for l in q.layers}
    zero_points = {l["name"]: l["zero_point"] for l in q.layers}
    assert zero_points[points[0]["name"]] == 0  # the input is signed; a ReLU's output is stored unsigned
    assert all(zero_points[l["name"]] == -128 for l in q.layers if l["relu"] or l["op"] == "max_pool2d")
    for p in points:
        hist, edges = p["histogram"], p["bin_edges"]
        assert hist.dtype == np.int64 and hist.shape == (2048,)
        assert edges.dtype == np.float64 and edges.shape == (2049,)
        # Every value of the 256 calibration images, once.
        assert hist.sum() == p["count"] == 256 * np.prod(shapes[p["name"]])
        assert edges[-1] == pytest.approx(2048 * p["bin_width"])
        assert p["abs_max"] <= edges[-1] * (1 + 1e-9)
        assert p["min"] <= p["mean"] <= p["max"]
        assert p["abs_max"] == pytest.approx(max(-p["min"], p["max"]))
        assert p["std"] >= 0
        assert p["method"] == "mse"
        assert 0 < p["amax"] <= p["abs_max"] * (1 + 1e-6)
        levels = 255.0 if zero_points[p["name"]] == -128 else 127.0
        assert p["scale"] == pytest.approx(levels / p["amax"], rel=1e-6)


def test_stats_of_any_float_node(quantized, lenet):
    for layer in lenet.layers:
        s = quantized.stats(layer["name"])
        assert s["histogram"].shape == (2048,) and s["count"] == 256 * np.prod(layer["shape"])
    first = quantized.points[0]
    np.testing.assert_array_equal(quantized.stats(first["float_node"])["histogram"], first["histogram"])
    with pytest.raises(octet.Error, match="no node 'nope'"):
        quantized.stats("nope")


def test_relu_outputs_have_no_negative_values(quantized, lenet):
    for layer in lenet.layers:
        if layer["relu"]:
            assert quantized.stats(layer["name"])["min"] >= 0


def test_an_unreachable_accuracy_target_writes_the_closest_model_and_exits_3(octet_bin, tmp_path):
    """LeNet-5 on CIFAR-10, `--min-agreement 100 --max-drop 0`: no mix of float and int8 layers agrees
    with float on every validation image (with signed activations), so the closest model is written, the
    JSON says the target was not met, the exit status is 3 (not 1: nothing was wrong with the input), and
    a rerun writes the same bytes."""
    cifar = os.environ.get("OCTET_CIFAR10_DIR", str(SOURCE_DIR / ".data" / "cifar-10-batches-bin"))
    if not os.path.exists(os.path.join(cifar, "test_batch.bin")):
        pytest.skip(f"CIFAR-10 binary files not found in {cifar} (tools/setup.sh writes them)")
    checkpoint = str(SOURCE_DIR / "models" / "zoo" / "lenet5_cifar10.octet")
    outputs = []
    for run in range(2):
        path = tmp_path / f"closest{run}.octet"
        result = subprocess.run([octet_bin, "quantize", "--checkpoint", checkpoint, "--data", cifar, "--method", "max",
                                 "--activations", "signed", "--calib-samples", "128", "--min-agreement", "100",
                                 "--max-drop", "0",
                                 "--val-samples", "300", "-o", str(path), "--json", str(tmp_path / "q.json")],
                                capture_output=True, text=True)
        assert result.returncode == 3, result.stderr
        assert "goal not met" in result.stderr and str(path) in result.stderr
        report = json.loads((tmp_path / "q.json").read_text())["accuracy_target"]
        assert report["met"] is False and report["validation_images"] == 300
        assert len(report["sensitivity"]) == 4 and report["float_layers"]
        outputs.append(path.read_bytes())
    assert outputs[0] == outputs[1]
    assert octet.load_quantized(str(tmp_path / "closest0.octet")).float_nodes


def test_accuracy_target_from_python_gives_the_sensitivity_table(octet_bin, tmp_path):
    """min_agreement as `--min-agreement`: the same model as the command line's (byte for byte once
    saved) and the search's record, its sensitivity list one row per weighted layer but the output."""
    cifar = os.environ.get("OCTET_CIFAR10_DIR", str(SOURCE_DIR / ".data" / "cifar-10-batches-bin"))
    if not os.path.exists(os.path.join(cifar, "test_batch.bin")):
        pytest.skip(f"CIFAR-10 binary files not found in {cifar} (tools/setup.sh writes them)")
    path = str(SOURCE_DIR / "models" / "zoo" / "lenet5_cifar10.octet")
    result = octet.quantize(octet.load_checkpoint(path), data_dir=cifar, method="max", calib_samples=128,
                            min_agreement=99.5, val_samples=300, activations="signed")
    target = result.accuracy_target
    assert [row["name"] for row in target["sensitivity"]] == ["conv1", "conv2", "fc1", "fc2"]
    assert target["met"] == (target["chosen"]["agreement"] >= 99.5)
    assert set(target["float_layers"]) <= set(result.model.float_nodes)
    run_cli(octet_bin, "quantize", "--checkpoint", path, "--data", cifar, "--method", "max", "--calib-samples", "128",
            "--activations", "signed", "--min-agreement", "99.5", "--val-samples", "300",
            "-o", str(tmp_path / "cli.octet"))
    result.model.save(str(tmp_path / "py.octet"))
    assert (tmp_path / "py.octet").read_bytes() == (tmp_path / "cli.octet").read_bytes()
    assert octet.quantize(octet.load_checkpoint(path), data_dir=cifar, method="max", calib_samples=128).accuracy_target is None


def test_sensitivity_is_the_accuracy_targets_table_for_any_model(tmp_path):
    """sensitivity() measures every weighted layer but the output on the validation split that
    min_agreement scores on: the same rows as the search's own table, whether or not a target
    was set, and sensitivity_table() prints them, the costliest first."""
    cifar = os.environ.get("OCTET_CIFAR10_DIR", str(SOURCE_DIR / ".data" / "cifar-10-batches-bin"))
    if not os.path.exists(os.path.join(cifar, "test_batch.bin")):
        pytest.skip(f"CIFAR-10 binary files not found in {cifar} (tools/setup.sh writes them)")
    checkpoint = octet.load_checkpoint(str(SOURCE_DIR / "models" / "zoo" / "lenet5_cifar10.octet"))
    searched = octet.quantize(checkpoint, data_dir=cifar, method="max", calib_samples=128, min_agreement=100,
                              val_samples=300, activations="signed")
    plain = octet.quantize(checkpoint, data_dir=cifar, method="max", calib_samples=128, activations="signed")
    rows = octet.sensitivity(checkpoint, plain.model, data_dir=cifar, calib_samples=128, val_samples=300)
    assert rows == searched.accuracy_target["sensitivity"]
    assert [row["name"] for row in rows] == ["conv1", "conv2", "fc1", "fc2"]
    assert 0.9 < sum(row["mac_share"] for row in rows) < 1
    assert all(0 <= row["agreement_only_it_float"] <= 100 and 0 <= row["agreement_only_it_int8"] <= 100 for row in rows)
    # Other validation images, other figures.
    assert octet.sensitivity(checkpoint, plain.model, data_dir=cifar, calib_samples=128, val_samples=200) != rows
    lines = octet.sensitivity_table(rows).splitlines()
    costliest = max(rows, key=lambda row: row["agreement_only_it_float"])["name"]
    assert len(lines) == 2 + len(rows) and lines[2].startswith(costliest)
    with pytest.raises(octet.Error, match="quantized model"):
        octet.sensitivity(octet.load_checkpoint(str(SOURCE_DIR / "models" / "zoo" / "lenet5_fmnist.octet")),
                          plain.model, data_dir=cifar)
