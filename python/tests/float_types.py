"""A float32 ONNX model rewritten with its weights in float16, bfloat16 or float64, as
onnxconverter-common's float16 conversion or a `model.half()` export writes them, for the
importer's tests and fuzz seeds (test_onnx_import_float_types.py, make_onnx_seeds.py)."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def bfloat16_bits(values):
    """float32 values rounded to bfloat16 (nearest, ties to even), as uint16 bits."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def narrowed(values, to):
    """float32 values as `to` holds them: (the file's tensor bits as uint16, or float64; their float32 values)."""
    if to == TensorProto.FLOAT16:
        half = np.asarray(values, np.float32).astype(np.float16)
        return half.view(np.uint16), half.astype(np.float32)
    if to == TensorProto.BFLOAT16:
        bits = bfloat16_bits(values)
        return bits, (bits.astype(np.uint32) << 16).view(np.float32)
    wide = np.asarray(values, np.float64)
    return wide, wide.astype(np.float32)


def tensor_of(name, dims, stored, to, raw):
    if to == TensorProto.DOUBLE:
        return helper.make_tensor(name, to, dims, stored.tobytes() if raw else stored.ravel().tolist(), raw=raw)
    if raw:
        return helper.make_tensor(name, to, dims, stored.tobytes(), raw=True)
    tensor = TensorProto(name=name, data_type=to, dims=dims)
    tensor.int32_data.extend(int(v) for v in stored.ravel())  # ONNX's encoding: one 16-bit value per int32
    return tensor


def retyped(path, to, keep_io_types, out_narrow, out_rounded):
    """Writes `path`'s model with every float weight in type `to` (alternately raw_data and the typed field) to
    out_narrow, and the float32 model holding the same values to out_rounded. The narrow model's input and output
    are `to` too, or float32 with Casts to and from `to` (keep_io_types)."""
    narrow, rounded = onnx.load(str(path)), onnx.load(str(path))
    for k, (t, r) in enumerate(zip(narrow.graph.initializer, rounded.graph.initializer)):
        if t.data_type != TensorProto.FLOAT:
            continue
        values = numpy_helper.to_array(t)
        stored, as_float = narrowed(values, to)
        t.CopyFrom(tensor_of(t.name, values.shape, stored, to, raw=k % 2 == 0))
        r.CopyFrom(numpy_helper.from_array(as_float.reshape(values.shape), r.name))
    graph = narrow.graph
    for node, same in zip(graph.node, rounded.graph.node):  # Constant nodes' float values (Clip's bounds) too
        value = next((a for a in node.attribute if a.name == "value"), None)
        if node.op_type == "Constant" and value is not None and value.t.data_type == TensorProto.FLOAT:
            values = numpy_helper.to_array(value.t)
            stored, as_float = narrowed(values, to)
            value.t.CopyFrom(tensor_of(value.t.name, values.shape, stored, to, raw=True))
            next(a for a in same.attribute if a.name == "value").t.CopyFrom(
                numpy_helper.from_array(as_float.reshape(values.shape)))
    image, logits = graph.input[0].name, graph.output[0].name
    if keep_io_types:
        for node in graph.node:
            node.input[:] = ["image_narrow" if i == image else i for i in node.input]
            node.output[:] = ["logits_narrow" if o == logits else o for o in node.output]
        graph.node.insert(0, helper.make_node("Cast", [image], ["image_narrow"], name="cast_in", to=to))
        graph.node.append(helper.make_node("Cast", ["logits_narrow"], [logits], name="cast_out", to=TensorProto.FLOAT))
    else:
        graph.input[0].type.tensor_type.elem_type = to
        graph.output[0].type.tensor_type.elem_type = to
    onnx.save(narrow, str(out_narrow))
    onnx.save(rounded, str(out_rounded))
