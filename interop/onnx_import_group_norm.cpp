// The ONNX importer's normalisations over groups of channels, octet's
// GroupNorm (graph/ops/group_norm.cpp): InstanceNormalization of an image (a
// group per channel) or of torch's GroupNorm view (Reshape to [N, g, -1],
// InstanceNormalization of scale 1 and shift 0, Reshape back: g groups), and
// ONNX's GroupNormalization (opsets 18 to 20: a scale and bias per group; 21:
// per channel). Each is a group_norm with an affine, its parameters those
// scales and shifts per channel (1 and 0 for torch's view: the Mul and Add
// after it fold into them, constant_affine).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "graph/ops/group_norm.h"
#include "interop/onnx_importer.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

namespace {
bool every_value_is(const std::vector<float>& values, float value) {
  return std::all_of(values.begin(), values.end(), [&](float v) { return v == value; });
}
}  // namespace

int Importer::group_norm_of(const onnx::NodeProto& n, int x, int64_t groups) {
  const ActShape in = shape_of(x);
  const float epsilon = float_attribute(n, "epsilon", 1e-5f);
  if (!(std::isfinite(epsilon) && epsilon >= 0))
    refuse(n, "epsilon " + std::to_string(epsilon) + ": not finite and >= 0");
  if (groups < 1 || in.c % groups != 0)
    refuse(n, std::to_string(groups) + " groups of the " + std::to_string(in.c) + " channels of " + to_string(in) +
                  ": octet's groups are runs of C / groups channels");
  if (in.numel() / groups > ops::kMostGroupNormValues)
    refuse(n, "groups of " + std::to_string(in.numel() / groups) + " values (" + to_string(in) + " in " +
                  std::to_string(groups) + "): octet normalises groups of at most 2^22");
  const std::string name = layer_name(n);
  params_[name + ".weight"] = FloatTensor({in.c}, 1.0f);
  params_[name + ".bias"] = FloatTensor({in.c}, 0.0f);
  return builder_.group_norm(name, x, static_cast<int>(groups), epsilon, true);
}

// n's output: the group norm `normalised` with its affine `scale` and `shift` per channel.
void Importer::define_normalised(const onnx::NodeProto& n, int normalised, const std::vector<float>& scale,
                                 const std::vector<float>& shift) {
  define(n, normalised);
  const std::string& name = node_at(normalised).name;
  params_[name + ".weight"].data = scale;
  params_[name + ".bias"].data = shift;
}

void Importer::instance_normalization(const onnx::NodeProto& n) {
  const FloatTensor scale = constant(n, 1), shift = constant(n, 2);
  if (const auto view = grouped_views_.find(n.input(0)); view != grouped_views_.end()) {
    const GroupedView v = view->second;
    if (v.step != GroupedStep::Runs)
      refuse(n, "of a channel shuffle's view: octet normalises groups of channels viewed as [N, g, -1] (GroupNorm's)");
    if (scale.numel() != v.groups || shift.numel() != v.groups || !every_value_is(scale.data, 1.0f) ||
        !every_value_is(shift.data, 0.0f))
      refuse(n, "a scale and shift other than 1 and 0 of GroupNorm's view [N, " + std::to_string(v.groups) +
                    ", -1]: octet takes them per channel, after the view back to the image");
    grouped_views_[n.output(0)] = {group_norm_of(n, v.node, v.groups), v.groups, GroupedStep::NormalisedRuns};
    return;
  }
  const int x = activation(n, 0);
  if (is_flat(x)) refuse(n, "of rows (N x F): octet's InstanceNormalization normalises an image's channels");
  const int channels = shape_of(x).c;
  if (scale.numel() != channels || shift.numel() != channels)
    refuse(n, "a scale of shape " + shape_string(scale.shape) + " and shift of shape " + shape_string(shift.shape) +
                  " for " + std::to_string(channels) + " channels");
  define_normalised(n, group_norm_of(n, x, channels), scale.data, shift.data);
}

void Importer::group_normalization(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  if (is_flat(x)) refuse(n, "of rows (N x F): octet's GroupNormalization normalises an image's channels");
  const int64_t channels = shape_of(x).c, groups = int_attribute(n, "num_groups", 0);
  const int normalised = group_norm_of(n, x, groups);
  const FloatTensor scale = constant(n, 1), shift = constant(n, 2);
  const bool per_channel = summary_.opset >= 21;  // GroupNormalization-18's are per group
  const int64_t expected = per_channel ? channels : groups;
  if (scale.numel() != expected || shift.numel() != expected)
    refuse(n, "a scale of shape " + shape_string(scale.shape) + " and bias of shape " + shape_string(shift.shape) +
                  ": at opset " + std::to_string(summary_.opset) + " they are one per " +
                  (per_channel ? "channel (" : "group (") + std::to_string(expected) + ")");
  std::vector<float> scales(static_cast<size_t>(channels)), shifts(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t k = per_channel ? c : c / (channels / groups);
    scales[static_cast<size_t>(c)] = scale.data[static_cast<size_t>(k)];
    shifts[static_cast<size_t>(c)] = shift.data[static_cast<size_t>(k)];
  }
  define_normalised(n, normalised, scales, shifts);
}

}  // namespace octet::onnx_import
