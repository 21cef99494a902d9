// GroupNorm: each sample's channels split into `groups` runs of C / groups
// consecutive channels, each run's values (its channels at every pixel)
// normalised to mean 0 and variance 1, (x - mean) / sqrt(var + epsilon),
// without the affine scale and shift, which the ONNX importer folds into the
// conv that reads them or makes a depthwise 1x1 conv (as LayerNorm's):
// torch's GroupNorm as exported (Reshape to [N, groups, -1],
// InstanceNormalization, Reshape back), ONNX's GroupNormalization, and
// InstanceNormalization (groups = channels). Attributes: groups, epsilon. In
// int8 its output has a scale of its own (group_norm.h says how each level is
// computed).
#include "graph/ops/group_norm.h"

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "graph/ops/float_reference.h"
#include "graph/ops/int8_reference.h"

namespace octet::ops {

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  check(n.groups >= 1 && in[0].c % n.groups == 0,
        std::to_string(n.groups) + " groups of " + std::to_string(in[0].c) + " channels (a divisor of them)");
  check(n.epsilon >= 0 && std::isfinite(n.epsilon), "epsilon " + std::to_string(n.epsilon) + " is not finite and >= 0");
  check(in[0].numel() / n.groups <= kMostGroupNormValues,
        "groups of " + std::to_string(in[0].numel() / n.groups) + " values (at most 2^22)");
  return in[0];
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  const int64_t C = a.out.c, pixels = int64_t{a.out.h} * a.out.w, G = a.node.groups, width = C / G;
  const int64_t runs = x.numel() / (pixels * C) * G;  // (sample, group) pairs
  const double count = double(pixels * width);
#pragma omp parallel for if (x.numel() >= kMinParallelElements)
  for (int64_t r = 0; r < runs; ++r) {
    const float* v = x.ptr() + r / G * pixels * C + r % G * width;
    float* y = a.y.ptr() + (v - x.ptr());
    double sum = 0, squares = 0;
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t c = 0; c < width; ++c) sum += v[p * C + c];
    const double mean = sum / count;
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t c = 0; c < width; ++c) squares += (v[p * C + c] - mean) * (v[p * C + c] - mean);
    const double root = std::sqrt(squares / count + a.node.epsilon);
    const double inverse = root > 0 ? 1.0 / root : 0.0;  // as the int8 form: constant values normalise to 0
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t c = 0; c < width; ++c) y[p * C + c] = static_cast<float>((v[p * C + c] - mean) * inverse);
  }
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3), G = a.node.groups, width = C / G;
  const LayerNormLevels p{width * H * W, a.input_scales.at(0), a.q.scale, a.input_zero_points.at(0), a.q.zero_point,
                          a.node.epsilon};
  a.y = ActTensor(x.shape);
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t first = 0; first < C; first += width) {
      int64_t sum = 0, squares = 0;
      for (int64_t c = first; c < first + width; ++c)
        for (int64_t yy = 0; yy < H; ++yy)
          for (int64_t xx = 0; xx < W; ++xx) {
            const int64_t v = centered(a, 0, b, c, yy, xx);
            sum += v;
            squares += v * v;
          }
      const LayerNormPixel group = layer_norm_pixel(sum, squares, p);
      for (int64_t c = first; c < first + width; ++c)
        for (int64_t yy = 0; yy < H; ++yy)
          for (int64_t xx = 0; xx < W; ++xx) at(a.y, b, c, yy, xx) = group_norm_level(at(x, b, c, yy, xx), p, group);
    }
}
}  // namespace

// Columns: name, inputs, training only, weighted, reads an image, absorbs a ReLU, absorbs a residual, owns a
// scale, input multipliers, moves values.
extern const OpDef group_norm = {{Op::GroupNorm, "group_norm", 1, false, false, true, false, false, true, 0, false},
                                 shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
