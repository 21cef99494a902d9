// LayerNorm: each pixel's channels normalised to mean 0 and variance 1,
// (x - mean) / sqrt(var + epsilon), without the affine scale and shift
// (the ONNX importer folds those into the linear layer or conv that reads
// them, or makes them a depthwise 1x1 conv): ConvNeXt's LayerNorm over the
// channels of a channels-last view, and ONNX's LayerNormalization over the
// last axis. Attribute: epsilon. In int8 its output has a scale of its own
// (layer_norm.h says how each level is computed).
#include "graph/ops/layer_norm.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/layer_norm.h"
#include "graph/ops/float_reference.h"
#include "graph/ops/int8_reference.h"

namespace octet::ops {

LayerNormPixel layer_norm_pixel(int64_t sum, int64_t squares, const LayerNormLevels& p) {
  return {sum + p.channels * p.input_zero_point,
          layer_norm_multiplier(sum, squares, p.channels, p.epsilon, p.input_scale, p.output_scale)};
}

template <typename T>
void layer_norm_levels(const T* x, const LayerNormLevels& p, int8_t* y) {
  const int64_t C = p.channels;
  int64_t sum = 0, squares = 0;
  for (int64_t c = 0; c < C; ++c) {
    const int64_t v = int64_t{x[c]} - p.input_zero_point;
    sum += v;
    squares += v * v;
  }
  const LayerNormPixel pixel = layer_norm_pixel(sum, squares, p);
  for (int64_t c = 0; c < C; ++c) {
    const double level = layer_norm_level(C * x[c] - pixel.offset, pixel.m);
    y[c] = static_cast<int8_t>(std::clamp(level + p.output_zero_point, -128.0, 127.0));
  }
}
template void layer_norm_levels<int8_t>(const int8_t*, const LayerNormLevels&, int8_t*);
template void layer_norm_levels<int16_t>(const int16_t*, const LayerNormLevels&, int8_t*);

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  check(n.epsilon >= 0 && std::isfinite(n.epsilon), "epsilon " + std::to_string(n.epsilon) + " is not finite and >= 0");
  check(in[0].c <= kMaxLayerNormChannels, "a layer norm of more than 2^20 channels");
  return in[0];
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  const int64_t C = a.out.c, pixels = x.numel() / C;
#pragma omp parallel for if (x.numel() >= kMinParallelElements)
  for (int64_t p = 0; p < pixels; ++p) {
    const float* v = x.ptr() + p * C;
    double sum = 0, squares = 0;
    for (int64_t c = 0; c < C; ++c) sum += v[c];
    const double mean = sum / double(C);
    for (int64_t c = 0; c < C; ++c) squares += (v[c] - mean) * (v[c] - mean);
    const double root = std::sqrt(squares / double(C) + a.node.epsilon);
    const double inverse = root > 0 ? 1.0 / root : 0.0;  // as the int8 form: constant values normalise to 0
    for (int64_t c = 0; c < C; ++c) a.y.ptr()[p * C + c] = static_cast<float>((v[c] - mean) * inverse);
  }
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const LayerNormLevels p{a.inputs[0]->dim(1), a.input_scales.at(0), a.q.scale, a.input_zero_points.at(0),
                          a.q.zero_point, a.node.epsilon};
  write_by_pixel(a, a.inputs[0]->dim(1), [&](const int16_t* x, int64_t, int8_t* y) { layer_norm_levels(x, p, y); });
}
}  // namespace

//                               name          in train  weight image  relu   resid  scale  mult  moves
extern const OpDef layer_norm = {{Op::LayerNorm, "layer_norm", 1, false, false, false, false, false, true, 0, false},
                                 shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
