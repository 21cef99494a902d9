// Python views of octet's graphs and statistics shared by the module's parts:
// layer tables, activations by node name, calibration statistics as dicts.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "calibrate/histogram.h"
#include "graph/graph.h"
#include "graph/output_view.h"
#include "python/src/arrays.h"

namespace octet::python {

constexpr int64_t kDefaultBatch = 256;

// Raises ValueError unless batch_size is positive.
void check_batch_size(int64_t batch_size);

// The conv or linear node named `layer`; fails naming the layers that have weights.
const Node& weighted_node(const Graph& g, const std::string& layer);

py::tuple shape_of(const ActShape& s);

// One dict per node of an inference graph: name, op, inputs, output shape.
py::list graph_layers(const Graph& g);

// One dict per output of a graph, in order: its name (its node's, or a detection head's output's), the shape
// predict gives an image of it ((classes,), (classes, H, W), (rows, K)), its nodes and its decode.
py::list graph_outputs(const Graph& g);

// A batch of a model's outputs as PyTorch returns them (graph/output_view.h): one array, or a tuple of them.
// `values[k]` holds the `batch` samples of output node k (NHWC).
template <typename T>
py::object model_outputs_object(const Graph& g, const std::vector<ActShape>& shapes,
                                const std::vector<std::vector<T>>& values, int64_t batch) {
  py::list outputs;
  for (const ModelOutput& m : model_outputs(g, shapes)) {
    std::vector<py::ssize_t> shape{batch};
    shape.insert(shape.end(), m.dims.begin(), m.dims.end());
    outputs.append(to_numpy(arrange_output(output_runs(g, shapes, m), values, batch), shape));
  }
  return outputs.size() == 1 ? py::object(outputs[0]) : py::object(py::tuple(outputs));
}

// Every node's output of one batch, as numpy arrays by node name. `nchw[i]` is
// node i's output (empty if the run did not report it).
template <typename T>
py::dict activations_dict(const Graph& g, const std::vector<ActShape>& shapes,
                          const std::vector<std::vector<T>>& nchw, int64_t batch) {
  py::dict out;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!nchw[i].empty()) out[py::str(g.nodes[i].name)] = to_numpy(nchw[i], activation_shape(batch, shapes[i]));
  return out;
}

// Node `node`'s NHWC output -> NCHW. A flatten's output is in octet's H, W, C
// order; it is shown in torch's C, H, W order.
template <typename T>
std::vector<T> node_output_nchw(const Graph& g, const std::vector<ActShape>& shapes, int node, const T* nhwc,
                                int64_t batch) {
  const Node& n = g.nodes[node];
  return nhwc_to_nchw(nhwc, batch, n.op == Op::Flatten ? shapes[n.inputs[0]] : shapes[node]);
}

// Histogram, bin edges and moments of a tensor's calibration statistics.
py::dict stats_dict(const TensorStats& s);

}  // namespace octet::python
