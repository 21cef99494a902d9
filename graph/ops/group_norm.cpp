// GroupNorm: each sample's channels split into `groups` runs of C / groups
// consecutive channels, each run's values (its channels at every pixel)
// normalised to mean 0 and variance 1, (x - mean) / sqrt(var + epsilon),
// then, with `bias`, an affine per channel (parameters ".weight", the scale,
// and ".bias", the shift, [C] each: torch's and ONNX's, kept in float in
// quantized models: NodeQuant::norm_scale and norm_shift), and a fused ReLU:
// torch's GroupNorm as exported (Reshape to [N, groups, -1],
// InstanceNormalization, Reshape back, Mul, Add), ONNX's GroupNormalization,
// and InstanceNormalization (groups = channels). Attributes: groups, epsilon,
// bias. In int8 its output has a scale of its own (group_norm.h says how each
// level is computed).
#include "graph/ops/group_norm.h"

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "graph/ops/float_reference.h"
#include "graph/ops/int8_reference.h"

namespace octet::ops {

std::vector<GroupNormChannel> group_norm_channels(int64_t channels, const FloatTensor& scale, const FloatTensor& shift,
                                                  double output_scale) {
  std::vector<GroupNormChannel> out(static_cast<size_t>(channels));
  if (scale.numel() == 0) return out;
  check(scale.numel() == channels && shift.numel() == channels,
        "a group norm's affine of " + std::to_string(scale.numel()) + " scales and " + std::to_string(shift.numel()) +
            " shifts for " + std::to_string(channels) + " channels");
  for (size_t c = 0; c < out.size(); ++c) out[c] = {double(scale.data[c]), double(shift.data[c]) * output_scale};
  return out;
}

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  check(n.groups >= 1 && in[0].c % n.groups == 0,
        std::to_string(n.groups) + " groups of " + std::to_string(in[0].c) + " channels (a divisor of them)");
  check(n.epsilon >= 0 && std::isfinite(n.epsilon), "epsilon " + std::to_string(n.epsilon) + " is not finite and >= 0");
  check(in[0].numel() / n.groups <= kMostGroupNormValues,
        "groups of " + std::to_string(in[0].numel() / n.groups) + " values (at most 2^22)");
  return in[0];
}

std::vector<ParamShape> params(const Node& n, const std::vector<ActShape>& in) {
  if (!n.bias) return {};
  return {{".weight", {in[0].c}, true}, {".bias", {in[0].c}, true}};
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
  if (!a.node.bias) return;
  const std::vector<float>& scale = a.layer->weight.data;
  const std::vector<float>& shift = a.layer->bias;
  check(int64_t(scale.size()) == C && int64_t(shift.size()) == C, "group norm '" + a.node.name + "': an affine of " +
                                                                      std::to_string(scale.size()) + " values for " +
                                                                      std::to_string(C) + " channels");
#pragma omp parallel for if (x.numel() >= kMinParallelElements)
  for (int64_t p = 0; p < x.numel() / C; ++p)
    for (int64_t c = 0; c < C; ++c) a.y.data[p * C + c] = a.y.data[p * C + c] * scale[size_t(c)] + shift[size_t(c)];
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3), G = a.node.groups, width = C / G;
  const LayerNormLevels p{width * H * W, a.input_scales.at(0), a.q.scale, a.input_zero_points.at(0), a.q.zero_point,
                          a.node.epsilon};
  const std::vector<GroupNormChannel> affine = group_norm_channels(C, a.q.norm_scale, a.q.norm_shift, a.q.scale);
  const double lowest = output_floor(a);
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
      for (int64_t c = first; c < first + width; ++c) {
        const GroupNormChannel& k = affine[size_t(c)];
        const double gain = group_norm_gain(group, k);
        for (int64_t yy = 0; yy < H; ++yy)
          for (int64_t xx = 0; xx < W; ++xx)
            at(a.y, b, c, yy, xx) = group_norm_level(at(x, b, c, yy, xx), p, group, gain, k.shift, lowest);
      }
    }
}
}  // namespace

// Columns: name, inputs, training only, weighted, reads an image, absorbs a ReLU, absorbs a residual, owns a
// scale, input multipliers, moves values.
extern const OpDef group_norm = {{Op::GroupNorm, "group_norm", 1, false, false, true, true, false, true, 0, false},
                                 shape, params, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
