"""A small evaluator of the ONNX operators octet's QDQ export uses, written
from the ONNX operator specification (opset 13) with numpy and torch's float
convolution, for machines whose onnx has no ReferenceEvaluator (it came in
onnx 1.13; Debian 12 ships 1.12) and no onnxruntime."""

import numpy as np
import onnx
from onnx import numpy_helper
import torch
from torch.nn import functional as F


def _attributes(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _per_axis(values, x, axis):
    """A 1-D scale or zero point broadcast along `axis` of x (a scalar as is)."""
    if values.ndim == 0:
        return values
    shape = [1] * x.ndim
    shape[axis] = values.size
    return values.reshape(shape)


def _quantize(x, scale, zero_point):
    info = np.iinfo(zero_point.dtype)
    q = np.rint(x / scale) + zero_point.astype(np.float32)  # rint: half to even, as the spec says
    return np.clip(q, info.min, info.max).astype(zero_point.dtype)


def _dequantize(q, scale, zero_point=None, axis=1):
    zero = np.zeros((), np.int64) if zero_point is None else _per_axis(zero_point, q, axis).astype(np.int64)
    return ((q.astype(np.int64) - zero).astype(np.float32) * _per_axis(scale, q, axis)).astype(np.float32)


def _conv(x, w, b, a):
    pads = a.get("pads", [0, 0, 0, 0])
    assert pads[:2] == pads[2:], "asymmetric padding"
    bias = None if b is None else torch.from_numpy(b)
    return F.conv2d(torch.from_numpy(x), torch.from_numpy(w), bias, stride=a.get("strides", 1),
                    padding=tuple(pads[:2]), dilation=a.get("dilations", 1)).numpy()


def _pool(x, a, maximum):
    pool = F.max_pool2d if maximum else F.avg_pool2d
    return pool(torch.from_numpy(x), a["kernel_shape"], a.get("strides", a["kernel_shape"])).numpy()


def _slice(x, starts, ends, axes, steps):
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps):
        index[axis] = slice(int(start), int(min(end, x.shape[axis])), int(step))
    return x[tuple(index)]


def run(model, inputs):
    """Evaluates `model` (an onnx.ModelProto) on a dict of numpy inputs; returns its outputs by name."""
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    values.update(inputs)
    for node in model.graph.node:
        x = [values[name] if name else None for name in node.input]
        a = _attributes(node)
        op = node.op_type
        if op == "QuantizeLinear":
            y = _quantize(x[0], x[1], x[2])
        elif op == "DequantizeLinear":
            y = _dequantize(x[0], x[1], x[2] if len(x) > 2 else None, a.get("axis", 1))
        elif op == "Conv":
            y = _conv(x[0], x[1], x[2] if len(x) > 2 else None, a)
        elif op == "Gemm":
            assert a.get("transB") == 1 and not a.get("transA")
            y = (x[0] @ x[1].T + (x[2] if len(x) > 2 else 0)).astype(np.float32)
        elif op == "Add":
            y = x[0] + x[1]
        elif op == "Relu":
            y = np.maximum(x[0], 0)
        elif op in ("MaxPool", "AveragePool"):
            y = _pool(x[0], a, op == "MaxPool")
        elif op == "GlobalAveragePool":
            y = x[0].mean(axis=(2, 3), keepdims=True)
        elif op == "Reshape":
            y = x[0].reshape(x[1])
        elif op == "Flatten":
            y = x[0].reshape(x[0].shape[0], -1)
        elif op == "Slice":
            y = _slice(*x)
        elif op == "Pad":
            pads = x[1].reshape(2, -1)
            y = np.pad(x[0], list(zip(pads[0], pads[1])))
        else:
            raise NotImplementedError(op)
        values[node.output[0]] = y
    return {output.name: values[output.name] for output in model.graph.output}
