#include "qmodel/quantized_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "common/error.h"
#include "common/json_values.h"
#include "common/requantize.h"
#include "common/safetensors.h"
#include "graph/op.h"

namespace octet {

namespace {

template <typename T>
void expect_shape(const Tensor<T>& t, const Shape& shape, const std::string& what) {
  check(t.shape == shape && static_cast<int64_t>(t.data.size()) == shape_numel(shape),
        what + " has shape " + shape_string(t.shape) + ", expected " + shape_string(shape));
}

// The integer kernels (runtime/cpu, runtime/cuda) accumulate in int32, where
// overflow is undefined behaviour (CPU) or wraps (GPU): refuse any file whose
// sums could leave int32 for some input. Inputs are int8 less their zero
// point (max_centered_input, common/requantize.h).
constexpr int64_t kInt32Max = 2147483647;

// The per-value checks below build their message only on failure: `auto`
// validates a model per candidate it tries.

void check_accumulators(const NodeQuant& q, int64_t depth, const NodeQuant& input, const std::string& at) {
  const int64_t largest = max_centered_input(input.zero_point, input.bits);
  for (int64_t o = 0; o < q.bias.numel(); ++o) {
    int64_t weight_sum = 0;
    for (int64_t k = 0; k < depth; ++k) weight_sum += std::abs(int64_t{q.weight.data[o * depth + k]});
    const int64_t bound = largest * weight_sum + std::abs(int64_t{q.bias.data[o]});
    if (bound > kInt32Max)
      fail(at + ": output channel " + std::to_string(o) + " can accumulate " + std::to_string(bound) +
           " (" + std::to_string(largest) + " x sum |weight| " + std::to_string(weight_sum) + " + |bias| " +
           std::to_string(std::abs(int64_t{q.bias.data[o]})) +
           "), beyond int32: its int32 accumulators could overflow");
  }
}

// `largest`: the largest max_centered_input of the node's inputs.
void check_window(double window, int64_t largest, const std::string& at) {
  const int64_t most = kInt32Max / largest;
  check(window <= double(most), at + ": a pooling window of " + std::to_string(int64_t(window)) +
                                    " values could overflow its int32 sum (at most " + std::to_string(most) + ")");
}

// The int8 weight's shape: the float model's ".weight" (torch's layout).
Shape weight_shape(const Node& n, const std::vector<ActShape>& shapes) {
  for (const ParamShape& p : op_def(n.op).params(n, input_shapes(n, shapes)))
    if (std::string(p.suffix) == ".weight") return p.shape;
  fail("operator '" + std::string(op_name(n.op)) + "' is weighted but owns no weight");
}

bool is_sha256(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

void check_shifts(const Int32Tensor& multiplier, const Int32Tensor& shift, const std::string& where) {
  for (int32_t m : multiplier.data)
    if (m < 0) fail(where + ".multiplier has a negative value " + std::to_string(m));
  for (int32_t s : shift.data)
    if (s < 1 || s > 62) fail(where + ".shift " + std::to_string(s) + " is outside [1, 62]");
}

// Suffixes of the tensors a node owns in the file.
std::set<std::string> tensor_suffixes(const Node& n, const NodeQuant& q, bool is_output) {
  const OpTraits& t = op_traits(n.op);
  if (n.op == Op::PRelu) return {".slope"};  // int8 or float, it reads them
  if (n.op == Op::GroupNorm && !n.bias) return {};
  if (n.op == Op::GroupNorm) return {".norm_scale", ".norm_shift"};  // its affine, in float
  if (q.in_float) return t.weighted ? std::set<std::string>{".float_weight", ".float_bias"} : std::set<std::string>{};
  if (t.weighted) {
    std::set<std::string> names = {".weight", ".weight_scale", ".bias"};
    if (is_output) return names.insert(".logit_scale"), names;
    names.insert({".multiplier", ".shift"});
    if (n.inputs.size() == 2) names.insert(".skip_multiplier");
    return names;
  }
  if (t.input_multipliers != 0) return {".multiplier", ".shift"};
  return {};
}

// Applies `visit(suffix, tensor)` to each tensor member of a node's record.
template <typename Record, typename Visit>
void for_each_tensor(Record& q, Visit visit) {
  visit(".weight", q.weight);
  visit(".weight_scale", q.weight_scale);
  visit(".bias", q.bias);
  visit(".multiplier", q.multiplier);
  visit(".shift", q.shift);
  visit(".skip_multiplier", q.skip_multiplier);
  visit(".logit_scale", q.logit_scale);
  visit(".float_weight", q.float_weight);
  visit(".float_bias", q.float_bias);
  visit(".slope", q.slope);
  visit(".norm_scale", q.norm_scale);
  visit(".norm_shift", q.norm_shift);
}

void check_finite(const FloatTensor& t, const std::string& what) {
  for (float v : t.data)
    if (!std::isfinite(v)) fail(what + " holds a NaN or infinite value");
}

// A node kept in float: not the input (it is the image's quantization) nor the
// output (its int32 accumulators are the logits); a weighted one owns its float
// parameters.
// A wide activation (NodeQuant::bits): a conv's signed output, read only by
// the dense convs that serve it (runtime/cpu/ops/conv2d_wide.cpp).
void check_bits(const QuantizedModel& m, const std::vector<std::vector<int>>& consumers, int i, const std::string& at) {
  const NodeQuant& q = m.quant[i];
  if (q.bits == 8) return;
  const Node& n = m.graph.nodes[i];
  check(q.bits >= 9 && q.bits <= 16, at + ": " + std::to_string(q.bits) + " bits (an activation has 8, or 9 to 16)");
  check(n.op == Op::Conv2d && n.groups == 1 && !q.in_float && !n.relu && q.zero_point == 0 && !m.graph.is_output(i),
        at + ": a " + std::to_string(q.bits) +
            "-bit activation must be a dense int8 conv's signed output (no ReLU, zero point 0)");
  for (int c : consumers[i]) {
    const Node& reader = m.graph.nodes[c];
    check(reader.op == Op::Conv2d && reader.groups == 1 && !m.quant[c].in_float,
          at + ": its " + std::to_string(q.bits) + "-bit output is read by '" + reader.name + "' (" +
              op_name(reader.op) + "), but only dense int8 convs read wide activations");
  }
}

void check_float_node(const Node& n, const NodeQuant& q, const Shape& weight_shape, bool is_output,
                      const std::string& at) {
  check(n.op != Op::Input && !is_output,
        at + ": only nodes between the input and the output can run in float (mixed precision)");
  if (!op_traits(n.op).weighted) return;
  expect_shape(q.float_weight, weight_shape, at + ".float_weight");
  check_finite(q.float_weight, at + ".float_weight");
  expect_shape(q.float_bias, {int64_t(n.channels)}, at + ".float_bias");
  check_finite(q.float_bias, at + ".float_bias");
}

}  // namespace

std::string CheckpointIdentity::describe() const {
  return model + " (parameters sha256 " + params_sha256.substr(0, 12) + ", graph " + graph_sha256.substr(0, 12) + ")";
}

bool QuantizedModel::mixed_precision() const {
  for (const NodeQuant& q : quant)
    if (q.in_float) return true;
  return false;
}

bool QuantizedModel::has_wide_activations() const {
  for (const NodeQuant& q : quant)
    if (q.bits != 8) return true;
  return false;
}

bool QuantizedModel::has_zero_points() const {
  for (const NodeQuant& q : quant)
    if (q.zero_point != 0) return true;
  return false;
}

int64_t QuantizedModel::predictions_per_image() const {
  const ActShape out = graph.shapes().back();
  return int64_t{out.h} * out.w;
}

std::vector<bool> QuantizedModel::float_outputs() const {
  std::vector<bool> out(quant.size(), false);
  for (size_t i = 0; i < quant.size(); ++i) out[i] = quant[i].in_float;
  for (const Node& n : graph.nodes)
    if (!quant[&n - graph.nodes.data()].in_float)
      for (int in : n.inputs) out[in] = false;
  return out;
}

void QuantizedModel::validate(const std::string& where) const {
  try {
    graph.validate();
  } catch (const Error& e) {
    fail(where + ": " + e.what());
  }
  check(quant.size() == graph.nodes.size(), where + ": " + std::to_string(quant.size()) +
                                                " quantization records for " + std::to_string(graph.nodes.size()) +
                                                " graph nodes");
  check(is_sha256(source.params_sha256) && is_sha256(source.graph_sha256),
        where + ": the identity of the source checkpoint is missing or malformed (two SHA-256 hex digests)");
  const std::vector<ActShape> shapes = graph.shapes();
  const std::vector<std::vector<int>> consumers = graph.consumers();
  for (int o : graph.outputs()) {
    const Node& out = graph.nodes[o];
    check((out.op == Op::Linear || (out.op == Op::Conv2d && out.groups == 1)) && out.inputs.size() == 1 && !out.relu,
          where + ": the output node '" + out.name +
              "' must be a linear layer or a dense conv (an image of logits) without ReLU or residual");
  }
  const Node& out = graph.nodes.back();
  check(static_cast<int>(classes.size()) == out.channels,
        where + ": " + std::to_string(classes.size()) + " class names for " + std::to_string(out.channels) + " logits");
  check(static_cast<int>(mean.size()) == shapes[0].c && static_cast<int>(std.size()) == shapes[0].c,
        where + ": normalisation does not have one mean and std per input channel");
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    const NodeQuant& q = quant[i];
    const std::string at = where + ": node '" + n.name + "'";
    const bool is_output = graph.is_output(static_cast<int>(i));
    const OpTraits& traits = op_traits(n.op);
    check(!traits.training_only, at + ": a " + std::string(traits.name) + " must be folded before quantization");
    check(q.zero_point >= -128 && q.zero_point <= 127,
          at + ": zero point " + std::to_string(q.zero_point) + " is outside int8's [-128, 127]");
    check(q.zero_point == 0 || (i != 0 && !is_output),
          at + ": the " + std::string(i == 0 ? "input" : "output") + " has no zero point (it is " +
              std::to_string(q.zero_point) + ")");
    check_bits(*this, consumers, static_cast<int>(i), at);
    if (is_output) {
      check(q.scale == 0, at + ": the output node has no int8 scale (its int32 accumulators are the logits)");
    } else {
      check(std::isfinite(q.scale) && q.scale > 0, at + ": activation scale " + std::to_string(q.scale) +
                                                       " is not a positive finite number");
    }
    if (n.op == Op::PRelu) {
      expect_shape(q.slope, {int64_t(shapes[i].c)}, at + ".slope");
      check_finite(q.slope, at + ".slope");
    }
    if (n.op == Op::GroupNorm && n.bias) {
      expect_shape(q.norm_scale, {int64_t(shapes[i].c)}, at + ".norm_scale");
      expect_shape(q.norm_shift, {int64_t(shapes[i].c)}, at + ".norm_shift");
      check_finite(q.norm_scale, at + ".norm_scale");
      check_finite(q.norm_shift, at + ".norm_shift");
    }
    if (q.in_float) {
      check_float_node(n, q, traits.weighted ? weight_shape(n, shapes) : Shape{}, is_output, at);
    } else if (traits.weighted) {
      const int64_t O = n.channels;
      const Shape wshape = weight_shape(n, shapes);
      expect_shape(q.weight, wshape, at + ".weight");
      expect_shape(q.weight_scale, {O}, at + ".weight_scale");
      for (float s : q.weight_scale.data)
        if (!(std::isfinite(s) && s > 0)) fail(at + ".weight_scale has a non-positive or non-finite value");
      expect_shape(q.bias, {O}, at + ".bias");
      check_accumulators(q, shape_numel(wshape) / O, quant[n.inputs[0]], at);
      if (is_output) {
        expect_shape(q.logit_scale, {O}, at + ".logit_scale");
        for (float s : q.logit_scale.data)
          if (!(std::isfinite(s) && s > 0)) fail(at + ".logit_scale is not positive finite");
      } else {
        expect_shape(q.multiplier, {O}, at + ".multiplier");
        expect_shape(q.shift, {O}, at + ".shift");
        check_shifts(q.multiplier, q.shift, at);
        if (n.inputs.size() == 2) {
          expect_shape(q.skip_multiplier, {O}, at + ".skip_multiplier");
          check_shifts(q.skip_multiplier, q.shift, at);
        }
      }
    } else if (traits.input_multipliers != 0) {
      const std::vector<MultiplierTerm> terms = multiplier_terms(n, shapes);
      expect_shape(q.multiplier, {static_cast<int64_t>(terms.size())}, at + ".multiplier");
      expect_shape(q.shift, {1}, at + ".shift");
      check_shifts(q.multiplier, q.shift, at);
      int64_t largest = 0;
      for (int in : n.inputs) largest = std::max<int64_t>(largest, max_centered_input(quant[in].zero_point));
      double window = 0;
      for (const MultiplierTerm& t : terms) window = std::max(window, t.window);
      check_window(window, largest, at);
    }
    if (!traits.owns_scale && n.op != Op::Input && !is_output) {
      check(q.scale == quant[n.inputs[0]].scale && q.zero_point == quant[n.inputs[0]].zero_point,
            at + ": a " + std::string(op_name(n.op)) +
                " keeps its input's scale and zero point, but the file gives others");
    }
  }
}

void save_quantized_model(const QuantizedModel& m, const std::string& path) {
  m.validate("cannot save '" + path + "'");
  TensorFile file;
  nlohmann::json nodes = nlohmann::json::parse(m.graph.to_json());
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const NodeQuant& q = m.quant[i];
    nodes[i]["scale"] = q.scale;
    nodes[i]["amax"] = q.amax;
    nodes[i]["method"] = q.method;
    if (q.zero_point != 0) nodes[i]["zero_point"] = q.zero_point;
    if (q.bits != 8) nodes[i]["bits"] = q.bits;
    if (q.in_float) nodes[i]["precision"] = "float";
    const Node& n = m.graph.nodes[i];
    const std::set<std::string> owned = tensor_suffixes(n, q, m.graph.is_output(static_cast<int>(i)));
    for_each_tensor(q, [&](const char* suffix, const auto& tensor) {
      if (owned.count(suffix)) file.put(n.name + suffix, tensor);
    });
  }
  nlohmann::json calibration = {{"method", m.method},
                                 {"granularity", m.granularity},
                                 {"scheme", m.scheme},
                                 {"weight_rounding", m.weight_rounding},
                                 {"samples", m.calibration_samples}};
  // Only when set: a model quantized without them keeps its bytes.
  if (m.equalized) calibration["equalized"] = true;
  if (m.bias_corrected) calibration["bias_corrected"] = true;
  file.metadata = {
      {"format", kQuantizedFormat},
      {"format_version", std::to_string(m.has_wide_activations() ? kQuantizedWideVersion
                                        : m.has_zero_points()      ? kQuantizedZeroPointVersion
                                        : m.mixed_precision()      ? kQuantizedMixedVersion
                                                                   : kQuantizedVersion)},
      {"graph", nodes.dump()},
      {"model", m.model},
      {"dataset", m.dataset},
      {"classes", nlohmann::json(m.classes).dump()},
      {"mean", nlohmann::json(m.mean).dump()},
      {"std", nlohmann::json(m.std).dump()},
      {"calibration", calibration.dump()},
      {"source_checkpoint", nlohmann::json({{"model", m.source.model},
                                            {"params_sha256", m.source.params_sha256},
                                            {"graph_sha256", m.source.graph_sha256}})
                                .dump()},
  };
  file.save(path);
}

QuantizedModel load_quantized_model(const std::string& path) {
  const TensorFile file = TensorFile::load(path);
  const std::string where = path;
  const auto format = file.metadata.find("format"), version = file.metadata.find("format_version");
  const bool version_1 = format != file.metadata.end() && format->second == kQuantizedFormat &&
                         version != file.metadata.end() && version->second == "1";
  check(!version_1,
        where + ": quantized model format version 1 predates the record of the float checkpoint it came from "
                "(this octet reads version " + std::to_string(kQuantizedVersion) +
            "): quantize the checkpoint again with `octet quantize`");
  const auto is_version = [&](int v) { return version != file.metadata.end() && version->second == std::to_string(v); };
  const bool wide = is_version(kQuantizedWideVersion);
  const bool zero_points = wide || is_version(kQuantizedZeroPointVersion);
  const bool mixed = zero_points || is_version(kQuantizedMixedVersion);
  file.check_format(kQuantizedFormat,
                    wide          ? kQuantizedWideVersion
                    : zero_points ? kQuantizedZeroPointVersion
                    : mixed       ? kQuantizedMixedVersion
                                  : kQuantizedVersion,
                    "quantized model");
  QuantizedModel m;
  std::set<std::string> expected_tensors;
  try {
    m.graph = Graph::from_json(file.meta("graph"));
    const nlohmann::json nodes = nlohmann::json::parse(file.meta("graph"));
    m.model = file.meta("model");
    m.dataset = file.meta("dataset");
    m.classes = nlohmann::json::parse(file.meta("classes")).get<std::vector<std::string>>();
    m.mean = json_floats(nlohmann::json::parse(file.meta("mean")), "metadata 'mean'");
    m.std = json_floats(nlohmann::json::parse(file.meta("std")), "metadata 'std'");
    const nlohmann::json calibration = nlohmann::json::parse(file.meta("calibration"));
    m.method = calibration.at("method").get<std::string>();
    m.granularity = calibration.at("granularity").get<std::string>();
    m.scheme = calibration.at("scheme").get<std::string>();
    m.weight_rounding = calibration.at("weight_rounding").get<std::string>();
    m.calibration_samples = json_int64(calibration.at("samples"), "calibration samples");
    m.equalized = calibration.value("equalized", false);
    m.bias_corrected = calibration.value("bias_corrected", false);
    const nlohmann::json source = nlohmann::json::parse(file.meta("source_checkpoint"));
    m.source.model = source.at("model").get<std::string>();
    m.source.params_sha256 = source.at("params_sha256").get<std::string>();
    m.source.graph_sha256 = source.at("graph_sha256").get<std::string>();
    m.quant.resize(m.graph.nodes.size());
    for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
      const Node& n = m.graph.nodes[i];
      NodeQuant& q = m.quant[i];
      q.scale = json_float(nodes[i].at("scale"), "node '" + n.name + "' scale");
      q.amax = json_float(nodes[i].at("amax"), "node '" + n.name + "' amax");
      q.method = nodes[i].at("method").get<std::string>();
      if (nodes[i].contains("zero_point")) {
        check(zero_points, "node '" + n.name + "' has a zero point, which needs format version " +
                               std::to_string(kQuantizedZeroPointVersion));
        const int64_t zero_point = json_int64(nodes[i].at("zero_point"), "node '" + n.name + "' zero point");
        check(zero_point >= -128 && zero_point <= 127,
              "node '" + n.name + "': zero point " + std::to_string(zero_point) + " is outside int8's [-128, 127]");
        q.zero_point = static_cast<int32_t>(zero_point);
      }
      if (nodes[i].contains("bits")) {
        check(wide, "node '" + n.name + "' has " + std::string("a bit width, which needs format version ") +
                        std::to_string(kQuantizedWideVersion));
        const int64_t bits = json_int64(nodes[i].at("bits"), "node '" + n.name + "' bits");
        check(bits >= 9 && bits <= 16, "node '" + n.name + "': " + std::to_string(bits) +
                                           " bits: a wide activation has 9 to 16 (8 is written as none)");
        q.bits = static_cast<int32_t>(bits);
      }
      if (nodes[i].contains("precision")) {
        const std::string precision = nodes[i].at("precision").get<std::string>();
        check(precision == "float", "node '" + n.name + "': precision '" + precision + "' is not 'float'");
        check(mixed, "node '" + n.name + "' runs in float, which needs format version " +
                         std::to_string(kQuantizedMixedVersion));
        q.in_float = true;
      }
      const std::set<std::string> owned = tensor_suffixes(n, q, m.graph.is_output(static_cast<int>(i)));
      for_each_tensor(q, [&](const char* suffix, auto& tensor) {
        if (!owned.count(suffix)) return;
        const std::string name = n.name + suffix;
        expected_tensors.insert(name);
        tensor = file.get<typename std::decay_t<decltype(tensor)>::value_type>(name);
      });
    }
  } catch (const nlohmann::json::exception& e) {
    fail(where + ": malformed metadata: " + e.what());
  } catch (const Error& e) {
    const std::string msg = e.what();
    fail(msg.rfind(where, 0) == 0 ? msg : where + ": " + msg);
  }
  for (const auto& entry : file.tensors())
    check(expected_tensors.count(entry.first) != 0,
          where + ": unexpected tensor '" + entry.first + "' (not used by any node)");
  m.validate(where);
  return m;
}

}  // namespace octet
