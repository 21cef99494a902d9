"""A layer whose input all but vanishes on the calibration images (a random-weight network's deep features:
torchvision's LRASPP at 520 x 520 reaches 1e-8) cannot hold its bias at the input's scale: octet quantize refuses it
naming the layer, its input's amax and the remedy, --float-nodes that layer, which then quantizes."""

import re
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
from unlabelled_import import export_image_model, imported, varied_inputs  # noqa: E402

nn = torch.nn


class Vanishing(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem, self.head, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1), nn.Linear(8, 4)
        self.stem.weight.data *= 1e-9
        self.stem.bias.data.zero_()
        self.head.bias.data.fill_(0.5)

    def forward(self, x):
        return self.fc(torch.relu(self.head(torch.relu(self.stem(x)))).mean((2, 3)))


def test_a_vanishing_input_is_refused_naming_the_layer_and_float_nodes(tmp_path, octet_bin):
    torch.manual_seed(5)
    export_image_model(Vanishing().eval(), tmp_path / "m.onnx", (3, 8, 8))
    imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    np.save(tmp_path / "x.npy", varied_inputs(7, 16, (3, 8, 8)))
    quantize = [octet_bin, "quantize", "--checkpoint", tmp_path / "m.octet", "--calib-data", tmp_path / "x.npy",
                "--method", "max", "-o", tmp_path / "m.int8"]
    refused = subprocess.run(list(map(str, quantize)), capture_output=True, text=True)
    assert refused.returncode == 1 and not (tmp_path / "m.int8").exists(), refused.stderr
    assert "overflows int32 at scale s_in * s_w (the input scale is too fine: its input's amax is" in refused.stderr
    layer = re.search(r"keep it in float \(--float-nodes (\S+)\)", refused.stderr).group(1)
    assert f"layer '{layer}'" in refused.stderr
    accepted = subprocess.run(list(map(str, quantize + ["--float-nodes", layer])), capture_output=True, text=True)
    assert accepted.returncode == 0 and (tmp_path / "m.int8").exists(), accepted.stderr
