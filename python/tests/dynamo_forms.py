"""The forms in which torch.onnx.export's default exporter (dynamo, from
PyTorch 2.9; torchlib and onnxscript's optimizer) writes a CNN, made from a
TorchScript export, PyTorch here (1.13) having no dynamo exporter. Read off
torchlib and the optimizer's sources: opset 18 (20 from PyTorch 2.9) and IR
version 10; every constant an initializer, scalars 0-d; adaptive_avg_pool2d(1)
a ReduceMean over axes [-1, -2] (ATen computes it as mean(-1, -2)); flatten a
Reshape to a constant [batch, features] (-1 for a free batch); Reduce* axes an input and an even
Split num_outputs (opset 18); GELU one Gelu node from opset 20; and nodes
carrying metadata_props (IR 10), which Debian's ONNX library (1.12) does not
know."""

import numpy as np
import onnx
from onnx import helper, numpy_helper


def _metadata(key, value):
    """NodeProto field 9 (metadata_props, a StringStringEntryProto) as raw bytes."""
    def field(number, data):
        return bytes([number << 3 | 2, len(data)]) + data
    return field(9, field(1, key.encode()) + field(2, value.encode()))


def _gelu_steps(graph):
    """torch's erf GELU (Div by sqrt 2, Erf, Add 1, Mul by x, Mul 0.5): {Div's output: (x, the last Mul's output)}
    and the names of the other steps' outputs."""
    readers = {}
    for n in graph.node:
        for name in n.input:
            readers.setdefault(name, []).append(n)
    made = {out: n for n in graph.node for out in n.output}
    found, steps = {}, set()
    for erf in (n for n in graph.node if n.op_type == "Erf"):
        div = made[erf.input[0]]
        chain = [erf]
        for op in ("Add", "Mul", "Mul"):
            (reader,) = readers[chain[-1].output[0]]
            assert reader.op_type == op, reader
            chain.append(reader)
        found[div.output[0]] = (div.input[0], chain[-1].output[0])
        steps.update(n.output[0] for n in chain)
    return found, steps


def as_dynamo_writes(model, opset):
    model = onnx.shape_inference.infer_shapes(model)
    graph = model.graph
    dims = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in list(graph.input) + list(graph.value_info) + list(graph.output)}
    batch = dims[graph.input[0].name][0] or -1
    initializers = list(graph.initializer)
    known = {t.name: numpy_helper.to_array(t) for t in initializers}

    def constant(name, array):
        initializers.append(numpy_helper.from_array(np.asarray(array), name))
        known[name] = np.asarray(array)
        return name

    gelus, gelu_steps = _gelu_steps(graph) if opset >= 20 else ({}, set())
    nodes = []
    for n in graph.node:
        attributes = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "Constant":
            constant(n.output[0], numpy_helper.to_array(attributes["value"]))
        elif n.output[0] in gelu_steps:
            continue
        elif n.output[0] in gelus:
            x, y = gelus[n.output[0]]
            nodes.append(helper.make_node("Gelu", [x], [y], name=n.name + "_gelu", approximate="none"))
        elif n.op_type == "GlobalAveragePool":
            axes = constant(n.output[0] + "/axes", np.array([-1, -2], np.int64))
            nodes.append(helper.make_node("ReduceMean", [n.input[0], axes], list(n.output), name=n.name, keepdims=1))
        elif n.op_type == "ReduceMean" and "axes" in attributes:
            axes = constant(n.output[0] + "/axes", np.array(attributes.pop("axes"), np.int64))
            nodes.append(helper.make_node("ReduceMean", [n.input[0], axes], list(n.output), name=n.name, **attributes))
        elif n.op_type == "Flatten":
            features = int(np.prod(dims[n.output[0]][1:]))
            shape = constant(n.output[0] + "/shape", np.array([batch, features], np.int64))
            nodes.append(helper.make_node("Reshape", [n.input[0], shape], list(n.output), name=n.name))
        elif n.op_type == "Split" and len(set(known[n.input[1]].tolist())) == 1:
            nodes.append(helper.make_node("Split", [n.input[0]], list(n.output), name=n.name,
                                          axis=attributes.get("axis", 0), num_outputs=len(n.output)))
        else:
            nodes.append(n)
    del graph.node[:]
    for n in nodes:
        written = helper.make_node(n.op_type, n.input, n.output, name=n.name)
        written.attribute.extend(n.attribute)
        written.ParseFromString(written.SerializeToString() + _metadata("namespace", "main_graph/" + n.name))
        graph.node.append(written)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    del graph.value_info[:]
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("", opset))
    model.ir_version = 10
    model.producer_name = "pytorch"
    return model
