"""`octet summary --checkpoint FILE`: the layer table and totals of a
checkpoint's graph, a trained built-in model's (the same as `--model`'s) or
one imported from ONNX (its layers, parameters and gradients)."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import octet

SOURCE_DIR = pathlib.Path(os.environ.get("OCTET_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
ZOO = SOURCE_DIR / "models" / "zoo"


def summary(octet_bin, *args):
    result = subprocess.run([octet_bin, "summary", *args, "--json", "-"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def test_a_trained_checkpoints_summary_is_its_models(octet_bin):
    from_file, table = summary(octet_bin, "--checkpoint", str(ZOO / "lenet5_fmnist.octet"))
    built_in, _ = summary(octet_bin, "--model", "lenet5", "--dataset", "fashion-mnist")
    assert from_file.pop("checkpoint") == str(ZOO / "lenet5_fmnist.octet")
    assert from_file == built_in
    assert from_file["trainable_parameters"] == 61706 and from_file["conv_layers"] == 2
    assert "checkpoint " + str(ZOO / "lenet5_fmnist.octet") in table


def test_an_imported_models_summary_lists_its_layers_and_parameters(tmp_path, octet_bin):
    imported = subprocess.run([octet_bin, "import", str(ZOO / "convnext_cifar10.onnx"), "--dataset", "cifar10", "-o",
                               str(tmp_path / "convnext.octet")], capture_output=True, text=True)
    if "built without it" in imported.stderr:
        pytest.skip("this octet has no ONNX library: " + imported.stderr.strip())
    assert imported.returncode == 0, imported.stderr
    got, table = summary(octet_bin, "--checkpoint", str(tmp_path / "convnext.octet"))
    checkpoint = octet.load_checkpoint(str(tmp_path / "convnext.octet"))
    assert (got["model"], got["dataset"], got["batch_norm"]) == ("convnext_cifar10", "cifar10", False)
    assert [layer["name"] for layer in got["layers"]] == [layer["name"] for layer in checkpoint.layers]
    assert [tuple(layer["output"]) for layer in got["layers"]] == [layer["shape"] for layer in checkpoint.layers]
    # six blocks, the stem, two downsamplings, the head
    assert [layer["op"] for layer in got["layers"]].count("layer_norm") == 10
    everything = sum(int(np.prod(p.shape)) for p in checkpoint.params.values())
    assert got["trainable_parameters"] == everything
    assert sum(layer["parameters"] for layer in got["layers"]) == everything
    if "gradients" in got:  # counted by a backward pass where octet has LibTorch
        assert got["gradients"] == everything
    assert got["last_linear_input"] == 128
    longest = max(len(layer["name"]) for layer in got["layers"])
    rows = table.splitlines()[:len(got["layers"]) + 1]  # the op column starts after the longest name, on every row
    assert longest > 22 and all(row[longest] == " " and row[longest + 1] != " " for row in rows)


def test_a_checkpoint_with_a_model_or_a_missing_file_is_refused(tmp_path, octet_bin):
    for args, fragment in ((["--checkpoint", str(ZOO / "lenet5_fmnist.octet"), "--model", "resnet20"],
                            "--model excludes --checkpoint"),
                           (["--checkpoint", str(tmp_path / "absent.octet")], "absent.octet")):
        result = subprocess.run([octet_bin, "summary", *args], capture_output=True, text=True)
        assert result.returncode != 0 and fragment in result.stderr, (result.returncode, result.stderr)
