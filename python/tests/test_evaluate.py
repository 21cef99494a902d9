"""Float vs int8 evaluation and the per-layer SQNR report, against `octet eval`."""

import json
import math
import subprocess

import pytest

import octet


def test_evaluate_matches_octet_eval(lenet, lenet_path, quantized, octet_bin, tmp_path):
    report = octet.evaluate(lenet, quantized.model, limit=1000)
    assert report["images"] == 1000
    assert report["float_top1"] > 85 and report["int8_top1"] > 85
    assert report["top1_difference"] == pytest.approx(report["int8_top1"] - report["float_top1"])
    assert 95 <= report["agreement"] <= 100
    assert report["float_seconds"] > 0 and report["int8_seconds"] > 0

    model_path = str(tmp_path / "q.safetensors")
    quantized.model.save(model_path)
    out = tmp_path / "eval.json"
    subprocess.run([octet_bin, "eval", "--checkpoint", lenet_path, "--quantized", model_path, "--limit", "1000",
                    "--json", str(out)], check=True, capture_output=True)
    cli = json.loads(out.read_text())
    assert report["backend"] == cli["backend"] == "cpu"
    for key in ("images", "float_top1", "int8_top1", "agreement"):
        assert report[key] == pytest.approx(cli[key])
    assert [l["name"] for l in report["layers"]] == [l["name"] for l in cli["layers"]]
    for mine, theirs in zip(report["layers"], cli["layers"]):
        assert mine["op"] == theirs["op"] and mine["method"] == theirs["method"]
        assert mine["zero_point"] == theirs["zero_point"] and mine["bits"] == theirs["bits"]
        assert mine["sqnr_db"] == pytest.approx(theirs["sqnr_db"], rel=1e-6)


def test_sqnr_report_is_a_list_of_dicts_ending_with_the_logits(lenet, quantized):
    report = octet.evaluate(lenet, quantized.model, limit=200)
    layers = report["layers"]
    assert isinstance(layers, list) and all(isinstance(l, dict) for l in layers)
    assert set(layers[0]) == {"name", "op", "scale", "zero_point", "amax", "method", "bits", "sqnr_db"}
    assert layers[-1]["name"] == "logits" and layers[-1]["method"] == "int32"
    for layer in layers:
        assert math.isfinite(layer["sqnr_db"]) and layer["sqnr_db"] > 10, layer
    # The input is the first quantization point: its scale is the model's. Its zero point is 0; each
    # tensor's is the model's (-128 for one stored unsigned, when the model was quantized so).
    assert layers[0]["scale"] == pytest.approx(quantized.model.layers[0]["scale"])
    zero_points = {l["name"]: l["zero_point"] for l in quantized.model.layers}
    assert layers[0]["zero_point"] == 0
    assert all(l["zero_point"] == zero_points[l["name"]] for l in layers[:-1])
    bits = {l["name"]: l["bits"] for l in quantized.model.layers}
    assert all(l["bits"] == bits[l["name"]] for l in layers[:-1])
    assert any(l["zero_point"] == -128 for l in layers)  # the defaults store ReLU outputs unsigned


def test_evaluate_without_layers_and_on_all_images(lenet, quantized):
    report = octet.evaluate(lenet, quantized.model, layers=False)
    assert report["images"] == 10000
    # Only the logits row when the per-layer report is off.
    assert [l["name"] for l in report["layers"]] == ["logits"]


def test_evaluate_refuses_a_checkpoint_it_was_not_quantized_from(quantized, lenet_path):
    cifar_path = lenet_path.replace("lenet5_fmnist", "lenet5_cifar10")
    cifar = octet.load_checkpoint(cifar_path)
    source = quantized.model.source_checkpoint
    assert source["model"] == "lenet5" and len(source["params_sha256"]) == 64
    with pytest.raises(octet.Error, match=r"quantized from the checkpoint lenet5 \(parameters sha256 "
                       + source["params_sha256"][:12] + r".*not from '" + cifar_path + "', which is lenet5"):
        octet.evaluate(cifar, quantized.model)
    with pytest.raises(octet.Error, match="no-such-dir"):
        octet.evaluate(octet.load_checkpoint(lenet_path), quantized.model, data_dir="/no-such-dir")


def test_evaluate_on_a_backend_by_name(lenet, quantized):
    on_cpu = octet.evaluate(lenet, quantized.model, limit=200, backend="cpu")
    assert on_cpu["backend"] == "cpu"
    assert on_cpu["int8_top1"] == octet.evaluate(lenet, quantized.model, limit=200)["int8_top1"]
    with pytest.raises(octet.Error, match=r"unknown backend 'tpu' \(known: cpu"):
        octet.evaluate(lenet, quantized.model, limit=200, backend="tpu")
