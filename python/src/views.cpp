#include "python/src/views.h"

#include "common/error.h"
#include "graph/op_traits.h"
#include "graph/output_decode.h"

namespace octet::python {

void check_batch_size(int64_t batch_size) {
  if (batch_size <= 0) throw py::value_error("batch_size must be positive, got " + std::to_string(batch_size));
}

const Node& weighted_node(const Graph& g, const std::string& layer) {
  const int i = g.find(layer);
  if (i >= 0 && op_traits(g.nodes[i].op).weighted) return g.nodes[i];
  std::string known;
  for (const Node& n : g.nodes)
    if (op_traits(n.op).weighted) known += (known.empty() ? "" : ", ") + n.name;
  fail((i < 0 ? "no layer '" + layer + "'" : "layer '" + layer + "' has no weights") + " (layers with weights: " +
       known + ")");
}

py::tuple shape_of(const ActShape& s) { return py::make_tuple(s.c, s.h, s.w); }

py::list graph_outputs(const Graph& g) {
  const std::vector<ActShape> shapes = g.shapes();
  py::list outputs;
  for (const ModelOutput& m : model_outputs(g, shapes)) {
    py::list nodes;
    for (int o : m.nodes) nodes.append(g.nodes[o].name);
    py::dict d;
    d["name"] = m.name.empty() ? g.nodes[m.nodes[0]].name : m.name;
    d["shape"] = py::tuple(py::cast(m.dims));
    d["nodes"] = nodes;
    d["decode"] = output_decoded(g, m) ? py::object(py::str(decode_name(g, m))) : py::object(py::none());
    outputs.append(d);
  }
  return outputs;
}

py::list graph_layers(const Graph& g) {
  const std::vector<ActShape> shapes = g.shapes();
  py::list layers;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    py::list inputs;
    for (int in : n.inputs) inputs.append(g.nodes[in].name);
    py::dict d;
    d["name"] = n.name;
    d["op"] = op_name(n.op);
    d["inputs"] = inputs;
    d["shape"] = shape_of(shapes[i]);
    d["relu"] = n.relu;
    layers.append(d);
  }
  return layers;
}

py::dict stats_dict(const TensorStats& s) {
  std::vector<double> edges(TensorStats::kBins + 1);
  for (int b = 0; b <= TensorStats::kBins; ++b) edges[b] = s.bin_width() * b;
  py::dict d;
  d["histogram"] = to_numpy(std::vector<int64_t>(s.histogram()), {TensorStats::kBins});
  d["bin_edges"] = to_numpy(std::move(edges), {TensorStats::kBins + 1});
  d["bin_width"] = s.bin_width();
  d["count"] = s.count();
  d["min"] = s.min();
  d["max"] = s.max();
  d["abs_max"] = s.abs_max();
  d["mean"] = s.mean();
  d["std"] = s.std();
  return d;
}

}  // namespace octet::python
