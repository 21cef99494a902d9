// Model outputs read through their nodes' views (graph/output_view.h).
#include "graph/output_view.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "common/error.h"
#include "graph/graph.h"
#include "graph/ops/float_reference.h"
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
  check(v.merged >= 1 && v.merged <= 4 && v.merged_last >= 1 && (v.merged_last == 1 || v.merged + v.merged_last <= 4),
        "view merges " + std::to_string(v.merged) + " leading and " + std::to_string(v.merged_last) +
            " trailing axes (1 to 4 leading; trailing ones apart from them)");
  const int64_t c = decoded_channels(v.decode, s.c), k = c / v.groups;
  const int64_t sizes[4] = {v.groups, k, s.h, s.w};
  const int64_t strides[4] = {k, 1, int64_t(s.w) * c, c};  // NHWC (decoded), channel = a * K + k
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

// Where a part of dimensions `dims` ends in its model output: at + dims where the view places it, else dims.
std::vector<int64_t> placed_extent(const Node& node, const std::vector<int64_t>& dims) {
  const std::vector<int64_t>& at = node.view.at;
  if (at.empty()) return dims;
  check(at.size() == dims.size(), "output '" + node.name + "' is placed at " + std::to_string(at.size()) +
                                      " indices, its part has " + std::to_string(dims.size()) + " dimensions");
  std::vector<int64_t> extent = dims;
  for (size_t d = 0; d < at.size(); ++d) {
    check(at[d] >= 0, "output '" + node.name + "' is placed at a negative index");
    extent[d] += at[d];
  }
  return extent;
}

// Fails unless the placed parts of `out` fill it, each value once: their boxes apart, their sizes adding up to it.
void check_placed_parts(const Graph& g, const std::vector<ActShape>& shapes, const ModelOutput& out) {
  if (g.nodes[static_cast<size_t>(out.nodes[0])].view.at.empty()) return;
  struct Box {
    std::vector<int64_t> first, end;
  };
  std::vector<Box> boxes;
  int64_t filled = 0;
  for (int o : out.nodes) {
    const Node& node = g.nodes[static_cast<size_t>(o)];
    const std::vector<int64_t> dims = output_part_dims(node.view, shapes[static_cast<size_t>(o)]);
    check(dims.size() == out.dims.size(), "output '" + node.name + "' of '" + out.name + "' has " +
                                              std::to_string(dims.size()) + " dimensions, its other parts " +
                                              std::to_string(out.dims.size()));
    Box box{node.view.at, placed_extent(node, dims)};
    for (const Box& other : boxes) {
      bool apart = false;
      for (size_t d = 0; d < dims.size(); ++d) apart |= box.end[d] <= other.first[d] || other.end[d] <= box.first[d];
      check(apart, "output '" + node.name + "' overlaps another part of '" + out.name + "'");
    }
    filled += std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<int64_t>());
    boxes.push_back(std::move(box));
  }
  // In double: indices from a malformed file must not overflow the product.
  const double size = std::accumulate(out.dims.begin(), out.dims.end(), 1.0, std::multiplies<double>());
  check(static_cast<double>(filled) == size,
        "the parts of output '" + out.name + "' (" + dims_string(out.dims) + ") leave values unset");
}
}  // namespace

std::vector<int64_t> output_part_dims(const OutputView& view, const ActShape& s) {
  if (view.order.empty())
    return s.h == 1 && s.w == 1 ? std::vector<int64_t>{s.c} : std::vector<int64_t>{s.c, s.h, s.w};
  const ViewAxes a = view_axes(view, s);
  const auto product = [](const int64_t* first, const int64_t* last) {
    return std::accumulate(first, last, int64_t{1}, std::multiplies<int64_t>());
  };
  std::vector<int64_t> dims{product(a.size, a.size + view.merged)};
  if (view.merged == 4) return dims;
  const int64_t* trailing = a.size + 4 - view.merged_last;
  dims.insert(dims.end(), a.size + view.merged, trailing);
  dims.push_back(product(trailing, a.size + 4));
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
      if (node.view.decode.kind != DecodeKind::None) {
        check(!node.view.order.empty(), "a decode without a view");
        check_decode(node.view.decode, node.view.groups, shapes[static_cast<size_t>(o)]);
      }
    } catch (const Error& e) {
      fail("output '" + node.name + "' of '" + node.view.name + "': " + e.what());
    }
    const std::vector<int64_t> extent = placed_extent(node, dims);
    if (node.view.name.empty() || outputs.empty() || outputs.back().name != node.view.name) {
      outputs.push_back({node.view.name, {o}, extent});
      continue;
    }
    ModelOutput& out = outputs.back();
    const bool placed = !g.nodes[static_cast<size_t>(out.nodes[0])].view.at.empty();
    check(placed == !node.view.at.empty(), "output '" + node.name + "' of '" + out.name +
                                               "': some of its parts are placed (at) and others follow one another");
    out.nodes.push_back(o);
    if (placed) {
      check(extent.size() == out.dims.size(), "output '" + node.name + "' of '" + out.name + "' has " +
                                                  std::to_string(extent.size()) + " dimensions, its other parts " +
                                                  std::to_string(out.dims.size()));
      for (size_t d = 0; d < extent.size(); ++d) out.dims[d] = std::max(out.dims[d], extent[d]);
      continue;
    }
    check(std::equal(dims.begin() + 1, dims.end(), out.dims.begin() + 1, out.dims.end()),
          "output '" + node.name + "' (" + dims_string(dims) + ") cannot be concatenated to the rows of '" + out.name +
              "' (" + dims_string(out.dims) + ")");
    out.dims[0] += dims[0];
  }
  for (const ModelOutput& out : outputs) check_placed_parts(g, shapes, out);
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

namespace {
// Appends to `runs` a run, or lengthens the last where the run continues it (the next image row of a [K, H x W]).
void add_run(std::vector<OutputRun>& runs, const OutputRun& r) {
  if (!runs.empty()) {
    OutputRun& last = runs.back();
    if (last.output == r.output && last.step == r.step && r.to == last.to + last.length &&
        r.at == last.at + last.length * last.step) {
      last.length += r.length;
      return;
    }
  }
  runs.push_back(r);
}

// Where value `i` of a part of dimensions `dims` placed at `at` goes in an output of dimensions `out` (row-major).
int64_t placed_index(int64_t i, const std::vector<int64_t>& dims, const std::vector<int64_t>& at,
                     const std::vector<int64_t>& out) {
  int64_t to = 0, stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    to += (at[d] + i % dims[d]) * stride;
    i /= dims[d];
    stride *= out[d];
  }
  return to;
}
}  // namespace

std::vector<OutputRun> output_runs(const Graph& g, const std::vector<ActShape>& shapes, const ModelOutput& out) {
  std::vector<OutputRun> runs;
  int64_t next = 0;  // where an unplaced part starts: after the previous one
  for (int o : out.nodes) {
    const Node& node = g.nodes[static_cast<size_t>(o)];
    const ActShape& s = shapes[static_cast<size_t>(o)];
    const int output = o - g.first_output();
    // The part's axes, the last one a run; without a view NHWC -> C, H x W.
    const ViewAxes a = node.view.order.empty() ? ViewAxes{{1, 1, s.c, int64_t(s.h) * s.w}, {0, 0, 1, s.c}}
                                               : view_axes(node.view, s);
    const std::vector<int64_t> dims = output_part_dims(node.view, s);
    int64_t i = 0;  // the run's first value in the part, row-major in its dimensions
    for (int64_t i0 = 0; i0 < a.size[0]; ++i0)
      for (int64_t i1 = 0; i1 < a.size[1]; ++i1)
        for (int64_t i2 = 0; i2 < a.size[2]; ++i2, i += a.size[3]) {
          // The part's last axis is the end of its last dimension: a run is consecutive in the output too.
          const int64_t to = node.view.at.empty() ? next + i : placed_index(i, dims, node.view.at, out.dims);
          add_run(runs, {output, to, i0 * a.stride[0] + i1 * a.stride[1] + i2 * a.stride[2], a.stride[3], a.size[3]});
        }
    next += i;
  }
  return runs;
}

template <typename T>
std::vector<T> arrange_output(const std::vector<OutputRun>& runs, const std::vector<std::vector<T>>& node_values,
                              int64_t batch) {
  std::vector<int64_t> per_sample(node_values.size());
  for (size_t k = 0; k < node_values.size(); ++k) per_sample[k] = static_cast<int64_t>(node_values[k].size()) / batch;
  int64_t size = 0;
  for (const OutputRun& r : runs) size = std::max(size, r.to + r.length);
  std::vector<T> y(static_cast<size_t>(batch * size));
  const int64_t count = static_cast<int64_t>(runs.size());
  // On the threads: YOLOv5s's output at 640 x 640 is 2.1 M values an image.
#pragma omp parallel for collapse(2) schedule(dynamic) if (batch * size >= ops::kMinParallelElements)
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t k = 0; k < count; ++k) {
      const OutputRun& r = runs[static_cast<size_t>(k)];
      const T* from = node_values[static_cast<size_t>(r.output)].data() + n * per_sample[r.output] + r.at;
      T* to = y.data() + n * size + r.to;
      for (int64_t v = 0; v < r.length; ++v) to[v] = from[v * r.step];
    }
  return y;
}

template std::vector<float> arrange_output(const std::vector<OutputRun>&, const std::vector<std::vector<float>>&,
                                          int64_t);
template std::vector<int32_t> arrange_output(const std::vector<OutputRun>&, const std::vector<std::vector<int32_t>>&,
                                             int64_t);

}  // namespace octet
