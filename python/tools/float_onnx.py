#!/usr/bin/python3
"""The float model of an octet checkpoint as ONNX (batch norms folded, as
octet's float executor runs it), for ONNX Runtime fp32 beside octet's int8:
`octet bench infer --onnx FILE`. Written only when ONNX Runtime's logits on
random inputs match octet's float executor's (1e-4 of the largest).

    PYTHONPATH=build/python /usr/bin/python3 python/tools/float_onnx.py models/zoo/resnet20_cifar10.octet r20.onnx

Operators: conv2d (same padding, kernel // 2), linear, add, global_avg_pool,
flatten, shortcut_a, relu; each node's ReLU. Needs python3-onnx, octet's
module, and node with onnxruntime-node (python/tests/ort_peer.py) for the check."""

import argparse
import pathlib
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import octet

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
import ort_peer  # noqa: E402

TOLERANCE = 1e-4  # of the largest |logit|


def nodes_of(checkpoint):
    """(ONNX nodes, initializers) of the checkpoint's folded graph."""
    nodes, initializers = [], []
    layers = {layer["name"]: layer for layer in checkpoint.layers}

    def constant(name, array):
        initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    for layer in checkpoint.layers:
        name, op, inputs = layer["name"], layer["op"], layer["inputs"]
        y = name if not layer["relu"] else name + ".pre_relu"
        if op == "input":
            continue
        if op == "conv2d":
            weight = checkpoint.weight(name)
            kernel = weight.shape[2]
            stride = layers[inputs[0]]["shape"][1] // layer["shape"][1]
            groups = layers[inputs[0]]["shape"][0] // weight.shape[1]
            nodes.append(helper.make_node("Conv", [inputs[0], constant(name + ".weight", weight),
                                                   constant(name + ".bias", checkpoint.bias(name))], [y],
                                          kernel_shape=[kernel, kernel], strides=[stride, stride],
                                          pads=[kernel // 2] * 4, group=groups))
        elif op == "linear":
            nodes.append(helper.make_node("Gemm", [inputs[0], constant(name + ".weight", checkpoint.weight(name)),
                                                   constant(name + ".bias", checkpoint.bias(name))], [y], transB=1))
        elif op == "add":
            nodes.append(helper.make_node("Add", inputs, [y]))
        elif op == "global_avg_pool":
            nodes.append(helper.make_node("GlobalAveragePool", inputs, [y]))
        elif op == "flatten":
            nodes.append(helper.make_node("Flatten", inputs, [y], axis=1))
        elif op == "relu":
            nodes.append(helper.make_node("Relu", inputs, [y]))
        elif op == "shortcut_a":  # every second row and column, zero channels either side
            pad = (layer["shape"][0] - layers[inputs[0]]["shape"][0]) // 2
            big = np.iinfo(np.int64).max
            nodes.append(helper.make_node("Slice", [inputs[0], constant(name + ".starts", np.array([0, 0])),
                                                    constant(name + ".ends", np.array([big, big])),
                                                    constant(name + ".axes", np.array([2, 3])),
                                                    constant(name + ".steps", np.array([2, 2]))], [name + ".sub"]))
            pads = constant(name + ".pads", np.array([0, pad, 0, 0, 0, pad, 0, 0]))
            nodes.append(helper.make_node("Pad", [name + ".sub", pads], [y]))
        else:
            sys.exit(f"float_onnx: node '{name}' ({op}) is not one this tool writes")
        if layer["relu"]:
            nodes.append(helper.make_node("Relu", [y], [name]))
    return nodes, initializers


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="float checkpoint (.octet)")
    parser.add_argument("output", help="the .onnx file to write")
    args = parser.parse_args()
    if ort_peer.missing():
        sys.exit(f"float_onnx: cannot check the file: {ort_peer.missing()}")
    checkpoint = octet.load_checkpoint(args.checkpoint)
    nodes, initializers = nodes_of(checkpoint)
    last = checkpoint.layers[-1]["name"]
    nodes.append(helper.make_node("Identity", [last], ["logits"]))
    graph = helper.make_graph(
        nodes, checkpoint.model + "_float", [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                                           ["batch", *checkpoint.input_shape])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", checkpoint.num_classes])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="octet float_onnx")
    model.ir_version = 7
    onnx.checker.check_model(model, full_check=True)

    x = np.random.default_rng(1).standard_normal((16, *checkpoint.input_shape)).astype(np.float32)
    expected = checkpoint.predict(x)
    output = pathlib.Path(args.output)
    scratch = output.with_name(output.name + ".partial")
    onnx.save(model, str(scratch))
    (logits,) = ort_peer.run(scratch, [x])
    difference = float(np.abs(logits - expected).max() / np.abs(expected).max())
    if difference > TOLERANCE:
        scratch.unlink()
        sys.exit(f"float_onnx: ONNX Runtime's logits differ from octet's float executor by {difference:.2g} "
                 f"of the largest (at most {TOLERANCE}): not written")
    scratch.replace(output)
    print(f"{args.checkpoint} -> {args.output}: {len(nodes)} nodes; ONNX Runtime matches octet's float executor "
          f"({difference:.2g} of the largest logit)")


if __name__ == "__main__":
    main()
