// Model outputs read through their nodes' views (graph/output_view.h).
#include "graph/output_view.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "common/error.h"
#include "graph/graph.h"
#include "graph/output_decode.h"

namespace octet {

namespace {
constexpr char kAxes[] = "akhw";

// One sample's axes a, k, h, w of a node's values in its view's order: their sizes and their strides in NHWC memory.
struct ViewAxes {
  int64_t size[4], stride[4];
};

ViewAxes view_axes(const OutputView& v, const ActShape& s) {
  std::string sorted = v.order;
  std::sort(sorted.begin(), sorted.end());
  check(sorted == "ahkw", "view order '" + v.order + "' is not the axes a, k, h and w, each once");
  check(v.groups >= 1 && s.c % v.groups == 0,
        "view's " + std::to_string(v.groups) + " groups do not divide " + std::to_string(s.c) + " channels");
  check(v.merged >= 1 && v.merged <= 4, "view merges " + std::to_string(v.merged) + " axes (1 to 4)");
  const int64_t k = s.c / v.groups;
  const int64_t sizes[4] = {v.groups, k, s.h, s.w};
  const int64_t strides[4] = {k, 1, int64_t(s.w) * s.c, s.c};  // NHWC, channel = a * K + k
  ViewAxes axes{};
  for (int i = 0; i < 4; ++i) {
    const int64_t axis = std::find(kAxes, kAxes + 4, v.order[i]) - kAxes;
    axes.size[i] = sizes[axis], axes.stride[i] = strides[axis];
  }
  return axes;
}

std::string dims_string(const std::vector<int64_t>& dims) {
  std::string s;
  for (int64_t d : dims) s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s;
}
}  // namespace

std::vector<int64_t> output_part_dims(const OutputView& view, const ActShape& s) {
  if (view.order.empty())
    return s.h == 1 && s.w == 1 ? std::vector<int64_t>{s.c} : std::vector<int64_t>{s.c, s.h, s.w};
  const ViewAxes a = view_axes(view, s);
  std::vector<int64_t> dims{std::accumulate(a.size, a.size + view.merged, int64_t{1}, std::multiplies<int64_t>())};
  dims.insert(dims.end(), a.size + view.merged, a.size + 4);
  return dims;
}

std::vector<ModelOutput> model_outputs(const Graph& g, const std::vector<ActShape>& shapes) {
  std::vector<ModelOutput> outputs;
  for (int o : g.outputs()) {
    const Node& node = g.nodes[static_cast<size_t>(o)];
    std::vector<int64_t> dims;
    try {
      check(node.view.name.empty() == node.view.order.empty(), "a view has both a name and an order, or neither");
      dims = output_part_dims(node.view, shapes[static_cast<size_t>(o)]);
      if (node.view.decode.stride != 0) {
        check(!node.view.order.empty(), "a decode without a view");
        check_decode(node.view.decode, node.view.groups, shapes[static_cast<size_t>(o)]);
      }
    } catch (const Error& e) {
      fail("output '" + node.name + "' of '" + node.view.name + "': " + e.what());
    }
    if (node.view.name.empty() || outputs.empty() || outputs.back().name != node.view.name) {
      outputs.push_back({node.view.name, {o}, dims});
      continue;
    }
    ModelOutput& out = outputs.back();
    check(std::equal(dims.begin() + 1, dims.end(), out.dims.begin() + 1, out.dims.end()),
          "output '" + node.name + "' (" + dims_string(dims) + ") cannot be concatenated to the rows of '" + out.name +
              "' (" + dims_string(out.dims) + ")");
    out.nodes.push_back(o);
    out.dims[0] += dims[0];
  }
  for (const ModelOutput& out : outputs)
    for (const ModelOutput& other : outputs)
      check(&out == &other || out.name.empty() || out.name != other.name,
            "output '" + out.name + "' is made of output nodes that are not consecutive");
  return outputs;
}

bool has_output_views(const Graph& g) {
  for (int o : g.outputs())
    if (!g.nodes[static_cast<size_t>(o)].view.name.empty()) return true;
  return false;
}

std::vector<OutputSource> output_sources(const Graph& g, const std::vector<ActShape>& shapes, const ModelOutput& out) {
  std::vector<OutputSource> sources;
  for (int o : out.nodes) {
    const Node& node = g.nodes[static_cast<size_t>(o)];
    const ActShape& s = shapes[static_cast<size_t>(o)];
    const int output = o - g.first_output();
    if (node.view.order.empty()) {  // NHWC -> C, H, W
      for (int64_t c = 0; c < s.c; ++c)
        for (int64_t p = 0; p < int64_t(s.h) * s.w; ++p) sources.push_back({output, p * s.c + c});
    } else {
      const ViewAxes a = view_axes(node.view, s);
      for (int64_t i0 = 0; i0 < a.size[0]; ++i0)
        for (int64_t i1 = 0; i1 < a.size[1]; ++i1)
          for (int64_t i2 = 0; i2 < a.size[2]; ++i2)
            for (int64_t i3 = 0; i3 < a.size[3]; ++i3)
              sources.push_back({output, i0 * a.stride[0] + i1 * a.stride[1] + i2 * a.stride[2] + i3 * a.stride[3]});
    }
  }
  return sources;
}

}  // namespace octet
