"""`octet import` of a model whose weights lie in a file beside it (ONNX's
external data), as torch.onnx.export writes it by default from PyTorch 2.9
(model.onnx and model.onnx.data) and onnx.save(..., save_as_external_data=True)
does: the same checkpoint as from the self-contained file, from either form
and any working folder; a location outside the model's folder, a missing or
short data file and a bad offset are refused naming the tensor, and nothing
is written."""

import os
import subprocess

import numpy as np
import pytest

import octet

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import export, random_model, refused  # noqa: E402


@pytest.fixture()
def exported(tmp_path):
    export(random_model(41), tmp_path / "whole.onnx")
    return onnx.load(str(tmp_path / "whole.onnx"))


def imported_params(tmp_path, octet_bin, path, cwd=None):
    out = tmp_path / (path.stem + ".octet")
    result = subprocess.run([os.path.abspath(octet_bin), "import", str(path), "--dataset", "cifar10", "-o", str(out)],
                            capture_output=True, text=True, cwd=cwd)
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
    return octet.load_checkpoint(str(out)).params


def test_external_data_imports_as_the_self_contained_file_does(tmp_path, octet_bin, exported):
    whole = imported_params(tmp_path, octet_bin, tmp_path / "whole.onnx")
    onnx.save(exported, str(tmp_path / "one.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="one.onnx.data", size_threshold=1024)  # torch's default: tensors of 1 KB or more
    (tmp_path / "each").mkdir()
    onnx.save(onnx.load(str(tmp_path / "whole.onnx")), str(tmp_path / "each" / "each.onnx"),
              save_as_external_data=True, all_tensors_to_one_file=False, size_threshold=0)
    assert (tmp_path / "one.onnx").stat().st_size < (tmp_path / "one.onnx.data").stat().st_size
    for path, cwd in ((tmp_path / "one.onnx", "/"), (tmp_path / "each" / "each.onnx", str(tmp_path))):
        got = imported_params(tmp_path, octet_bin, path, cwd)
        assert got.keys() == whole.keys()
        assert all(np.array_equal(got[k], whole[k]) for k in whole)
    in_python = octet.import_onnx(str(tmp_path / "one.onnx"), dataset="cifar10").params
    assert all(np.array_equal(in_python[k], whole[k]) for k in whole)


def with_location(tmp_path, exported, name, edit):
    """`exported` saved as NAME.onnx with its data in NAME.data, then its fc1.weight's entries edited by `edit`."""
    onnx.save(exported, str(tmp_path / f"{name}.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location=f"{name}.data", size_threshold=1024)
    model = onnx.load(str(tmp_path / f"{name}.onnx"), load_external_data=False)
    weight = next(t for t in model.graph.initializer if t.name == "fc1.weight")
    entries = {e.key: e.value for e in weight.external_data}
    edit(entries)
    del weight.external_data[:]
    for key, value in entries.items():
        weight.external_data.add(key=key, value=value)
    onnx.save(model, str(tmp_path / f"{name}.onnx"))
    return tmp_path / f"{name}.onnx"


@pytest.mark.parametrize("name, edit, message", [
    ("climbs", lambda e: e.update(location="../outside.data"), "outside the model's folder"),
    ("absolute", lambda e: e.update(location="/etc/hostname"), "outside the model's folder"),
    ("missing", lambda e: e.update(location="absent.data"), "its file 'absent.data' is not beside the model"),
    ("no_location", lambda e: e.pop("location"), "names no file"),
    ("short", lambda e: e.update(offset=str(int(e["offset"]) + 10 ** 6)), "which holds"),
    ("bad_offset", lambda e: e.update(offset="-4"), "offset '-4' is not a byte count"),
])
def test_external_data_octet_cannot_read_is_refused(tmp_path, octet_bin, exported, name, edit, message):
    (tmp_path / "outside.data").write_bytes(b"\0" * 100000)
    (tmp_path / "models").mkdir()
    path = with_location(tmp_path / "models", exported, name, edit)
    refused(tmp_path / "models", octet_bin, path, "tensor 'fc1.weight' (external data)", message)

