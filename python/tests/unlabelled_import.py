"""Checks shared by the tests of models imported without a dataset (classes by
number, the input as the model reads it: spectrograms, waveforms): octet's
float logits against PyTorch's and ONNX Runtime's, its int8 model against its
float one, and the int8 model's QDQ export in ONNX Runtime."""

import subprocess

import numpy as np
import octet
import ort_peer
import pytest
import torch
from torchscript_onnx import torchscript_export


def varied_inputs(seed, count, shape):
    """`count` inputs of `shape`: normal noise times a contrast of each input's own, plus a mean of each input's own
    per channel (axis 0 of `shape`). Random weights' logits of plain noise differ from input to input by little
    beside what they share; these differ enough that int8's top-1 agreement with float means something."""
    rng = np.random.default_rng(seed)
    ones = (1,) * (len(shape) - 1)
    return (rng.normal(size=(count, *shape)) * rng.uniform(0.5, 2, size=(count, 1, *ones)) +
            rng.uniform(-1, 1, size=(count, shape[0], *ones))).astype(np.float32)


def randomise_batch_norms(model):
    """Running statistics that make folding them matter: means in [-0.3, 0.3], variances in [0.5, 2]."""
    for bn in (m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)):
        bn.running_mean.uniform_(-0.3, 0.3)
        bn.running_var.uniform_(0.5, 2.0)
    return model


def export_image_model(model, path, image, dynamic_batch=True):
    """`model` written to `path` at opset 13 (input "image", one sample of shape `image`; output "logits"), its
    batch dynamic unless told; returns the model."""
    batch = {"dynamic_axes": {"image": {0: "n"}, "logits": {0: "n"}}} if dynamic_batch else {}
    torchscript_export(model, torch.zeros(1, *image), path, opset_version=13, input_names=["image"],
                       output_names=["logits"], **batch)
    return model


def octet_import(octet_bin, onnx_path, out):
    """`octet import` of onnx_path (no dataset), its result; skips where octet has no ONNX library."""
    result = subprocess.run([octet_bin, "import", str(onnx_path), "-o", str(out)], capture_output=True, text=True)
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    return result


def imported(octet_bin, onnx_path, out):
    result = octet_import(octet_bin, onnx_path, out)
    assert result.returncode == 0, result.stderr
    return octet.load_checkpoint(str(out))


def refused(octet_bin, onnx_path, out, *fragments):
    result = octet_import(octet_bin, onnx_path, out)
    assert result.returncode == 1, result.stdout
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr
    assert not out.exists()


def assert_matches_pytorch_and_onnx_runtime(got, model, onnx_path, inputs):
    """octet's logits `got` of `inputs` within 1e-4 of the largest of PyTorch's, then of ONNX Runtime's."""
    with torch.no_grad():
        expected = model(torch.from_numpy(inputs)).numpy()
    largest = np.abs(expected).max()
    assert largest > 1 and np.abs(got - expected).max() <= 1e-4 * largest, (np.abs(got - expected).max(), largest)
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    theirs = ort_peer.run(str(onnx_path), [inputs])[0]
    assert np.abs(got - theirs).max() <= 1e-4 * largest


def int8_top1_agreement(tmp_path, octet_bin, checkpoint_path, inputs):
    """Quantizes the checkpoint on inputs[:32] (a .npy as given, max) into tmp_path / "m.int8"; returns how
    often its int8 top-1 agrees with float's on `inputs`, and its dequantized logits. Both top-1s are of the
    logits less float's mean over the inputs: random weights' biases would otherwise pick one class for every
    input (and agree whatever int8 computes); at least 3 classes must win somewhere."""
    float_logits = octet.load_checkpoint(str(checkpoint_path)).predict(inputs)
    np.save(tmp_path / "calibration.npy", inputs[:32])
    subprocess.run([octet_bin, "quantize", "--checkpoint", str(checkpoint_path), "--calib-data",
                    str(tmp_path / "calibration.npy"), "--method", "max", "-o", str(tmp_path / "m.int8")],
                   capture_output=True, text=True, check=True)
    ours = octet.load_quantized(str(tmp_path / "m.int8")).predict(inputs, dequantize=True)
    centre = float_logits.mean(0)
    expected = (float_logits - centre).argmax(1)  # per input, or per pixel of an image of logits
    assert len(np.unique(expected)) >= 3, np.bincount(expected.ravel())
    return np.mean((ours - centre).argmax(1) == expected), ours


def int8_and_export_of_images(tmp_path, octet_bin, checkpoint_path, inputs):
    """For a model returning an image of logits: int8_top1_agreement (per pixel), then its QDQ export run by ONNX
    Runtime on inputs[:16]; returns the agreement, octet's dequantized logits and ORT's (skips without ORT)."""
    agreement, ours = int8_top1_agreement(tmp_path, octet_bin, checkpoint_path, inputs)
    subprocess.run([octet_bin, "export", "--quantized", str(tmp_path / "m.int8"), "--onnx", str(tmp_path / "q.onnx")],
                   capture_output=True, text=True, check=True)
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    theirs = np.concatenate([ort_peer.run(tmp_path / "q.onnx", [inputs[i:i + 1]])[0] for i in range(16)])
    assert theirs.shape == ours[:16].shape
    return agreement, ours, theirs


def assert_int8_follows_float_and_exports(tmp_path, octet_bin, checkpoint_path, inputs, export_inputs,
                                          tolerance=5e-3, least_agreement=0.85):
    """Quantizes the checkpoint (int8_top1_agreement); its int8 top-1 agrees with float on `inputs` at least
    `least_agreement` of the time (random weights on varied_inputs: 0.88 to 1.0), and its QDQ export run by
    ONNX Runtime on export_inputs[:16] (the export's own image layout) gives its dequantized logits within
    `tolerance` of the largest (ORT computes between the QDQ pairs in float: now and then a level rounds the
    other way and the difference travels on, up to 3.2e-3 of the largest at ORT's level "disabled" and 4.3e-3
    at "all" on these tests' models)."""
    agreement, ours = int8_top1_agreement(tmp_path, octet_bin, checkpoint_path, inputs)
    assert agreement >= least_agreement, agreement
    subprocess.run([octet_bin, "export", "--quantized", str(tmp_path / "m.int8"), "--onnx", str(tmp_path / "q.onnx")],
                   capture_output=True, text=True, check=True)
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    theirs = np.concatenate([ort_peer.run(tmp_path / "q.onnx", [export_inputs[i:i + 1]])[0] for i in range(16)])
    assert np.abs(ours[:16] - theirs).max() <= tolerance * np.abs(ours).max(), np.abs(ours[:16] - theirs).max()
