// The ONNX importer's SimAM (parameter-free attention), from its ReduceMean
// over height and width: d = (x - mean)^2, then d / (a sum(d) + b), the sum
// over height and width and its affine a, b made of scalar constants (SimAM's
// / (H W - 1), + lambda, * 4). That is z^2 / (a H W) for z the instance norm
// of x with epsilon b / (a H W): octet's GroupNorm of one group per channel,
// its scale 1 / sqrt(a H W), then square. In int8 each channel is normalised
// by the GroupNorm's own arithmetic; taken step by step (a Sub of the mean,
// the square, a Div by a reciprocal table) the channels' variances, spanning
// decades, would share one int8 reciprocal. The sigmoid gate after it, and
// the Mul by it, are imported as usual.
#include <cmath>

#include "graph/ops/group_norm.h"
#include "interop/onnx_importer.h"

namespace octet::onnx_import {

// A scalar constant, also one written later than the node looking ahead at it, or shape arithmetic cast to
// float whose value is known (SimAM's H W - 1).
std::optional<double> Importer::scalar_ahead(const std::string& name) {
  if (const FloatTensor* c = constant_ahead(name))
    return c->numel() == 1 ? std::optional<double>(c->data[0]) : std::nullopt;
  const onnx::NodeProto* cast = writer_of(name, "Cast");
  const auto known = cast && cast->input_size() == 1 ? shape_values_.find(cast->input(0)) : shape_values_.end();
  if (known == shape_values_.end() || known->second.values.size() != 1 || known->second.values[0] <= kUnknownDim)
    return std::nullopt;
  return static_cast<double>(known->second.values[0]);
}

bool Importer::simam_pattern(const onnx::NodeProto& mean) {
  const auto in = values_.find(mean.input(0));
  if (in == values_.end() || is_flat(in->second) || is_one_row(mean, 0) || channels_last_.count(mean.input(0)) ||
      int_attribute(mean, "keepdims", 1) == 0 || reduce_axes(mean) != std::vector<int64_t>{2, 3})
    return false;
  const onnx::NodeProto* sub = sole_reader_of(mean.output(0), "Sub");
  if (!sub || sub->input(0) != mean.input(0) || sub->input(1) != mean.output(0)) return false;
  const onnx::NodeProto* square = sole_reader_of(sub->output(0), "Pow");
  if (!square || square->input(0) != sub->output(0) || !is_scalar(*square, 1, 2.0)) return false;
  const std::vector<const onnx::NodeProto*>& readers = readers_[square->output(0)];
  if (readers.size() != 2 || is_model_output(square->output(0))) return false;
  const bool sum_first = readers[0]->op_type() == "ReduceSum";
  const onnx::NodeProto *total = readers[sum_first ? 0 : 1], *div = readers[sum_first ? 1 : 0];
  if (total->op_type() != "ReduceSum" || div->op_type() != "Div" || !arity_of(*total).fits(*total) ||
      !arity_of(*div).fits(*div) || div->input(0) != square->output(0) || int_attribute(*total, "keepdims", 1) == 0 ||
      axes_of(*total, 4) != std::vector<int64_t>{2, 3})
    return false;
  // The sum's affine, step by step up to the Div's divisor: each step's one reader, a scalar constant its other input.
  double a = 1, b = 0;
  std::vector<const onnx::NodeProto*> steps = {sub, square, total, div};
  std::string value = total->output(0);
  for (int k = 0; value != div->input(1); ++k) {
    const auto r = readers_.find(value);
    if (k > g_.node_size() || r == readers_.end() || r->second.size() != 1 || is_model_output(value)) return false;
    const onnx::NodeProto& step = *r->second[0];
    if (step.input_size() != 2 || !arity_of(step).fits(step)) return false;
    const int constant = step.input(0) == value ? 1 : 0;
    const std::optional<double> c = scalar_ahead(step.input(constant));
    const std::string& op = step.op_type();
    if (!c || step.input(1 - constant) != value) return false;
    if (op == "Mul") a *= *c, b *= *c;
    else if (op == "Add") b += *c;
    else if (op == "Div" && constant == 1) a /= *c, b /= *c;
    else if (op == "Sub" && constant == 1) b -= *c;
    else return false;
    steps.push_back(&step);
    value = step.output(0);
  }
  const ActShape s = shape_of(in->second);
  const double spread = a * s.h * s.w, epsilon = b / spread;
  if (!(spread > 0) || !(epsilon >= 0) || !std::isfinite(spread) || !std::isfinite(epsilon) ||
      int64_t{s.h} * s.w > ops::kMostGroupNormValues)
    return false;  // taken step by step
  const std::string name = layer_name(mean);
  params_[name + ".weight"] = FloatTensor({s.c}, static_cast<float>(1 / std::sqrt(spread)));
  params_[name + ".bias"] = FloatTensor({s.c}, 0.0f);
  const int z = builder_.group_norm(name, in->second, s.c, static_cast<float>(epsilon), true);
  const int y = builder_.activation(z, "square");
  for (const onnx::NodeProto* step : steps) fused_nodes_[step] = y;
  define(mean, y);
  return true;
}

}  // namespace octet::onnx_import
