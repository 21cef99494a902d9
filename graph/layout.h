// Weight layouts for NHWC execution, shared by the float executor and the
// integer runtimes: checkpoints and quantized files keep torch's layouts
// (conv OIHW; a linear after a flatten reads C, H, W), executors read NHWC.
#pragma once

#include <cstdint>
#include <vector>

#include "common/error.h"
#include "common/tensor.h"
#include "graph/graph.h"

namespace octet {

// One activation of a batch as octet stores it (NHWC) -> N x C x H x W, the
// layout a numpy/torch user expects (the Python module, octet predict's .npy files).
template <typename T>
std::vector<T> nhwc_to_nchw(const T* nhwc, int64_t batch, const ActShape& shape) {
  const int64_t plane = int64_t(shape.h) * shape.w;
  std::vector<T> nchw(static_cast<size_t>(batch * shape.numel()));
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t p = 0; p < plane; ++p)
      for (int64_t c = 0; c < shape.c; ++c) nchw[(n * shape.c + c) * plane + p] = nhwc[(n * plane + p) * shape.c + c];
  return nchw;
}

// Conv weight [O][I][KH][KW] -> [O][KH][KW][I].
template <typename T>
Tensor<T> conv_weight_ohwi(const Tensor<T>& w) {
  const int64_t O = w.dim(0), I = w.dim(1), KH = w.dim(2), KW = w.dim(3);
  Tensor<T> out({O, KH, KW, I});
  for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < I; ++i)
      for (int64_t y = 0; y < KH; ++y)
        for (int64_t x = 0; x < KW; ++x)
          out.data[((o * KH + y) * KW + x) * I + i] = w.data[((o * I + i) * KH + y) * KW + x];
  return out;
}

// Linear weight [O][C*H*W] reading a flattened C x H x W tensor -> columns in H, W, C order.
template <typename T>
Tensor<T> linear_weight_hwc(const Tensor<T>& w, const ActShape& s) {
  const int64_t O = w.dim(0), F = w.dim(1);
  check(F == s.numel(), "linear weight has " + std::to_string(F) + " inputs for a flattened " + to_string(s));
  Tensor<T> out({O, F});
  for (int64_t o = 0; o < O; ++o)
    for (int c = 0; c < s.c; ++c)
      for (int y = 0; y < s.h; ++y)
        for (int x = 0; x < s.w; ++x)
          out.data[o * F + (int64_t(y) * s.w + x) * s.c + c] = w.data[o * F + (int64_t(c) * s.h + y) * s.w + x];
  return out;
}

// The weight of a conv or linear node in NHWC reading order, flattened to [O][K].
template <typename T>
Tensor<T> nhwc_weight(const Graph& g, const std::vector<ActShape>& shapes, int node, const Tensor<T>& w) {
  const Node& n = g.nodes[node];
  Tensor<T> out;
  if (n.op == Op::Conv2d) {
    out = conv_weight_ohwi(w);
  } else {
    const Node& in = g.nodes[n.inputs[0]];
    out = in.op == Op::Flatten ? linear_weight_hwc(w, shapes[in.inputs[0]]) : w;
  }
  out.shape = {w.dim(0), w.numel() / w.dim(0)};
  return out;
}

// The inverse of nhwc_weight: [O][K] in NHWC reading order back to the torch
// layout `like` has.
template <typename T>
Tensor<T> torch_weight(const Graph& g, const std::vector<ActShape>& shapes, int node, const Tensor<T>& nhwc,
                       const Shape& torch_shape) {
  Tensor<int64_t> position(torch_shape);
  for (int64_t k = 0; k < position.numel(); ++k) position.data[k] = k;
  const Tensor<int64_t> order = nhwc_weight(g, shapes, node, position);
  Tensor<T> out(torch_shape);
  for (int64_t k = 0; k < order.numel(); ++k) out.data[order.data[k]] = nhwc.data[k];
  return out;
}

}  // namespace octet
