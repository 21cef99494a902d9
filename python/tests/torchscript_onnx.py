"""torch.onnx.export with the TorchScript exporter, the one these tests are
written for: from PyTorch 2.9 the default is the dynamo exporter, which writes
opset 18 whatever opset_version asks, folds batch norms that training=PRESERVE
keeps, and writes Pad and Reduce* in forms opset 13 has no adapter for."""

import inspect

import torch


def torchscript_export(model, example, path, **kwargs):
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    torch.onnx.export(model, example, str(path), **kwargs)
