#include "quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "common/error.h"
#include "common/requantize.h"
#include "graph/op.h"
#include "qmodel/checkpoint_identity.h"
#include "quant/auto_amax.h"
#include "quant/auto_global.h"
#include "quant/bias_correction.h"
#include "quant/fixed_point.h"
#include "quant/non_negative.h"

namespace octet {

namespace {

// The step of `levels` levels above 0 up to amax (common/requantize.h positive_levels).
float scale_for(double amax, double levels = 127.0) { return amax > 0 ? static_cast<float>(levels / amax) : 1.0f; }

// A non-negative tensor's zero point with unsigned activations: 0 is stored as -128.
constexpr int32_t kUnsignedZeroPoint = -128;

// The quantized graph before any scale is known: which float node each
// quantized node comes from, and whose statistics give its scale.
struct Plan {
  Graph graph;
  std::vector<int> stats_node;   // float node whose output this node's int8 output stands for
  std::vector<bool> own_scale;   // a quantization point
  std::vector<bool> in_float;    // kept in float (QuantizeOptions::float_nodes)
  // A quantization point's zero point: kUnsignedZeroPoint where it is stored as
  // uint8 (QuantizeOptions::unsigned_activations), else 0.
  std::vector<int32_t> zero_point;
  std::vector<int32_t> bits;  // NodeQuant::bits of each quantization point
};

// Marks the nodes named in `names`; fails on a name that is not a node between
// the input and the output of the quantized graph.
std::vector<bool> float_node_flags(const Graph& g, const std::vector<std::string>& names) {
  std::vector<bool> flags(g.nodes.size(), false);
  for (const std::string& name : names) {
    const auto found = std::find_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.name == name; });
    check(found != g.nodes.end(), "float nodes: the quantized graph has no node '" + name +
                                      "' (an add fused into the conv before it is named by that conv; `octet "
                                      "summary` lists the nodes)");
    const size_t i = static_cast<size_t>(found - g.nodes.begin());
    check(i != 0 && i + 1 != g.nodes.size(),
          "float nodes: '" + name + "' is the " + (i == 0 ? "input" : "output") +
              ", which stays int8 (only nodes between the input and the output can run in float)");
    flags[i] = true;
  }
  return flags;
}

// NodeQuant::bits of node i of the quantized graph: up to `wide_bits` where
// its output is a dense conv's signed one, read only by dense int8 convs.
int32_t activation_bits(const Plan& plan, const std::vector<std::vector<int>>& consumers,
                        const std::vector<ActShape>& shapes, size_t i, int wide_bits) {
  const Node& n = plan.graph.nodes[i];
  const auto dense_int8_conv = [&](size_t k) {
    return plan.graph.nodes[k].op == Op::Conv2d && plan.graph.nodes[k].groups == 1 && !plan.in_float[k];
  };
  if (wide_bits <= 8 || !plan.own_scale[i] || !dense_int8_conv(i) || n.relu || plan.zero_point[i] != 0 ||
      consumers[i].empty())
    return 8;
  int32_t bits = wide_bits;
  for (int c : consumers[i]) {
    if (!dense_int8_conv(static_cast<size_t>(c))) return 8;
    const Node& reader = plan.graph.nodes[c];
    if (reader.inputs[0] != static_cast<int>(i)) continue;  // its fused residual: no sum over it
    const double depth = double(reader.kernel) * kernel_width(reader) * shapes[i].c;
    bits = std::min(bits, 24 - static_cast<int32_t>(std::ceil(std::log2(depth))));
  }
  return bits > 8 ? bits : 8;
}

Plan plan_graph(const Graph& fg, const std::vector<std::string>& float_nodes, bool unsigned_activations,
                int wide_bits) {
  const auto consumers = fg.consumers();
  const size_t N = fg.nodes.size();
  std::vector<int> fused_conv(N, -1), skip_of(N, -1);
  std::vector<bool> is_fused(N, false);
  for (size_t a = 0; a < N; ++a) {
    const Node& add = fg.nodes[a];
    if (add.op != Op::Add) continue;
    for (int k = 0; k < 2; ++k) {
      const int c = add.inputs[k];
      const Node& conv = fg.nodes[c];
      if (op_traits(conv.op).absorbs_residual && conv.inputs.size() == 1 && !conv.relu && consumers[c].size() == 1 &&
          !is_fused[c]) {
        fused_conv[a] = c;
        skip_of[a] = add.inputs[1 - k];
        is_fused[c] = true;
        break;
      }
    }
  }
  Plan plan;
  std::vector<int> new_index(N, -1);
  for (size_t f = 0; f < N; ++f) {
    if (is_fused[f]) continue;
    Node n = fg.nodes[f];
    if (fused_conv[f] >= 0) {  // emit the conv at the add's place, so its skip input already exists
      const Node& add = fg.nodes[f];
      n = fg.nodes[fused_conv[f]];
      n.inputs = {n.inputs[0], skip_of[f]};
      n.relu = add.relu;
      n.relu_max = add.relu_max;
    }
    for (int& in : n.inputs) in = new_index[in];
    plan.graph.nodes.push_back(n);
    new_index[f] = static_cast<int>(plan.graph.nodes.size()) - 1;
    if (fused_conv[f] >= 0) new_index[fused_conv[f]] = new_index[f];
    plan.stats_node.push_back(static_cast<int>(f));
    plan.own_scale.push_back(op_traits(n.op).owns_scale && !fg.is_output(static_cast<int>(f)));
  }
  plan.graph.output_count = fg.output_count;
  plan.graph.validate();
  plan.in_float = float_node_flags(plan.graph, float_nodes);
  plan.zero_point.assign(plan.graph.nodes.size(), 0);
  if (unsigned_activations) {
    const std::vector<bool> non_negative = non_negative_outputs(plan.graph);
    for (size_t i = 0; i < non_negative.size(); ++i)
      if (non_negative[i]) plan.zero_point[i] = kUnsignedZeroPoint;
  }
  const auto quantized_consumers = plan.graph.consumers();
  const std::vector<ActShape> shapes = plan.graph.shapes();
  for (size_t i = 0; i < plan.graph.nodes.size(); ++i)
    plan.bits.push_back(activation_bits(plan, quantized_consumers, shapes, i, wide_bits));
  return plan;
}

// Int8 weights and scales of every conv and linear, by layer name.
std::map<std::string, QuantizedWeights> quantize_all_weights(const FloatModel& folded, const FloatPassRecord& record,
                                                             const QuantizeOptions& o) {
  std::map<std::string, QuantizedWeights> weights;
  std::map<std::string, FloatTensor> scales;
  for (const Node& n : folded.graph.nodes) {
    if (!op_traits(n.op).weighted) continue;
    weights[n.name] = quantize_weights(folded.weight(n), o.per_channel, o.scheme == "lab", n.name);
    scales[n.name] = weights[n.name].scales;
  }
  if (record.gptq())
    for (auto& [name, levels] : record.gptq()->round(folded, scales)) weights[name].values = levels;
  return weights;
}

// The quantized model's graph and description, its parameters still empty.
QuantizedModel model_header(const Checkpoint& checkpoint, const Plan& plan, const QuantizeOptions& o,
                            const Calibration& cal) {
  QuantizedModel qm;
  qm.graph = plan.graph;
  qm.model = checkpoint.model;
  qm.source = checkpoint_identity(checkpoint);
  qm.dataset = checkpoint.dataset;
  qm.classes = checkpoint.classes;
  qm.mean = checkpoint.mean;
  qm.std = checkpoint.std;
  qm.method = amax_method_name(o.method);
  qm.granularity = o.per_channel ? "per-channel" : "per-tensor";
  qm.scheme = o.scheme;
  qm.weight_rounding = o.scheme == "lab" ? "nearest" : o.weight_rounding;
  qm.calibration_samples = cal.samples;
  qm.bias_corrected = o.bias_correction;

  return qm;
}

// Fills the quantization parameters of `qm` (whose graph is the plan's) from
// the amax of every quantization point, by float node: scales, int8 weights,
// int32 biases and the fixed-point multipliers of every requantization.
void fill_quant(const Plan& plan, const FloatModel& folded, const std::map<std::string, QuantizedWeights>& weights,
                const std::vector<double>& amax, const std::vector<std::string>& methods, QuantizedModel* qm) {
  const size_t N = plan.graph.nodes.size();
  qm->quant.assign(N, NodeQuant());
  const std::vector<ActShape> shapes = qm->graph.shapes();
  for (size_t i = 0; i < N; ++i) {
    const Node& n = qm->graph.nodes[i];
    NodeQuant& q = qm->quant[i];
    const std::string where = "layer '" + n.name + "'";
    if (plan.own_scale[i]) {
      const int f = plan.stats_node[i];
      // A fused Clip(0, max): int8's saturation at amax is the clip, so amax may not pass it.
      const double clipped = n.relu_max > 0 ? std::min<double>(amax[f], n.relu_max) : amax[f];
      q.amax = static_cast<float>(clipped);
      q.zero_point = plan.zero_point[i];
      q.bits = plan.bits[i];
      q.scale = scale_for(clipped, q.bits > 8 ? highest_output(q.bits) : positive_levels(q.zero_point));
      q.method = amax[f] > 0 ? methods[f] : "zero tensor (scale 1)";
    } else if (!qm->graph.is_output(static_cast<int>(i))) {
      q.scale = qm->quant[n.inputs[0]].scale;
      q.amax = qm->quant[n.inputs[0]].amax;
      q.zero_point = qm->quant[n.inputs[0]].zero_point;
      q.method = "inherited";
    }
    const float s_in = n.inputs.empty() ? 0.0f : qm->quant[n.inputs[0]].scale;
    if (n.op == Op::PRelu) q.slope = folded.weight(n);  // int8 or float, it reads them
    if (n.op == Op::GroupNorm && n.bias) q.norm_scale = folded.weight(n), q.norm_shift = folded.bias(n);
    if (plan.in_float[i]) {
      q.in_float = true;
      if (op_traits(n.op).weighted) q.float_weight = folded.weight(n), q.float_bias = folded.bias(n);
    } else if (op_traits(n.op).weighted) {
      const QuantizedWeights& w = weights.at(n.name);
      q.weight = w.values;
      q.weight_scale = w.scales;
      const FloatTensor& bias = folded.bias(n);
      const int64_t O = n.channels;
      q.bias = Int32Tensor({O});
      for (int64_t c = 0; c < O; ++c) {
        const double b = std::round(double(bias.data[c]) * s_in * w.scales.data[c]);
        if (!(std::abs(b) < 2147483647.0))  // the message is built only on failure, as in to_fixed_point
          fail(where + ": bias " + std::to_string(bias.data[c]) +
               " overflows int32 at scale s_in * s_w (the input scale is too fine: its input's amax is " +
               std::to_string(qm->quant[n.inputs[0]].amax) + "); keep it in float (--float-nodes " + n.name +
               ") or calibrate on images whose activations reach it");
        q.bias.data[c] = static_cast<int32_t>(b);
      }
      if (qm->graph.is_output(static_cast<int>(i))) {
        q.logit_scale = FloatTensor({O});
        for (int64_t c = 0; c < O; ++c) q.logit_scale.data[c] = 1.0f / (s_in * w.scales.data[c]);
      } else {
        q.multiplier = Int32Tensor({O});
        q.shift = Int32Tensor({O});
        if (n.inputs.size() == 2) q.skip_multiplier = Int32Tensor({O});
        for (int64_t c = 0; c < O; ++c) {
          std::vector<double> reals = {double(q.scale) / (double(s_in) * w.scales.data[c])};
          if (n.inputs.size() == 2) reals.push_back(double(q.scale) / qm->quant[n.inputs[1]].scale);
          const FixedPoint fp = to_fixed_point(reals, where, c);
          q.multiplier.data[c] = fp.multipliers[0];
          q.shift.data[c] = fp.shift;
          if (n.inputs.size() == 2) q.skip_multiplier.data[c] = fp.multipliers[1];
        }
      }
    } else if (op_traits(n.op).multiplies_inputs) {
      // One multiplier for the product: output scale / (input scales' product).
      double inputs_scale = 1;
      for (int in : n.inputs) inputs_scale *= qm->quant[in].scale;
      const FixedPoint fp = to_fixed_point({double(q.scale) / inputs_scale}, where);
      q.multiplier = Int32Tensor({1}, fp.multipliers);
      q.shift = Int32Tensor({1}, std::vector<int32_t>{fp.shift});
    } else if (op_traits(n.op).input_multipliers != 0) {
      // Output scale / (input scale x window), for each multiplier (graph/op.h multiplier_terms).
      std::vector<double> reals;
      for (const MultiplierTerm& t : multiplier_terms(n, shapes))
        reals.push_back(double(q.scale) / (double(qm->quant[n.inputs[t.input]].scale) * t.window));
      const FixedPoint fp = to_fixed_point(reals, where);
      q.multiplier = Int32Tensor({static_cast<int64_t>(reals.size())}, fp.multipliers);
      q.shift = Int32Tensor({1}, std::vector<int32_t>{fp.shift});
    }
  }
}

}  // namespace

FloatPassRecord float_pass_record(const FloatExecutor& executor, const QuantizeOptions& o, int64_t calibration_samples) {
  const bool gptq = o.weight_rounding == "gptq" && o.scheme != "lab";
  return FloatPassRecord(executor, gptq ? std::min(o.gptq_samples, calibration_samples) : 0,
                         scores_models(o.method) ? std::min(o.auto_samples, calibration_samples) : 0,
                         o.bias_correction ? calibration_samples : 0);
}

QuantizedWeights quantize_weights(const FloatTensor& w, bool per_channel, bool lab_scheme, const std::string& layer) {
  const int64_t O = w.dim(0), per = w.numel() / O;
  for (float v : w.data)
    if (!std::isfinite(v)) fail("layer '" + layer + "': weights contain NaN or infinite values");
  QuantizedWeights q;
  q.values = Int8Tensor(w.shape);
  q.scales = FloatTensor({O});
  auto range_scale = [&](int64_t first, int64_t count) {
    const auto [lo, hi] = std::minmax_element(w.data.begin() + first, w.data.begin() + first + count);
    const double amax = lab_scheme ? double(*hi) - double(*lo) : std::max(std::abs(double(*lo)), std::abs(double(*hi)));
    return scale_for(amax);
  };
  const float tensor_scale = per_channel ? 0.0f : range_scale(0, w.numel());
  for (int64_t o = 0; o < O; ++o) {
    const float s = per_channel ? range_scale(o * per, per) : tensor_scale;
    q.scales.data[o] = s;
    for (int64_t k = o * per; k < (o + 1) * per; ++k)
      q.values.data[k] = static_cast<int8_t>(std::clamp(std::round(w.data[k] * s), -128.0f, 127.0f));
  }
  return q;
}

QuantizedModel quantize(const Checkpoint& checkpoint, const FloatModel& folded, const Calibration& cal,
                        const QuantizeOptions& o, PhaseClock* clock, const FloatPassRecord* record) {
  PhaseClock own_clock;
  if (!clock) clock = &own_clock;
  check(o.scheme == "octet" || o.scheme == "lab", "unknown scheme '" + o.scheme + "' (known: octet, lab)");
  check(o.weight_rounding == "gptq" || o.weight_rounding == "nearest",
        "unknown weight rounding '" + o.weight_rounding + "' (known: gptq, nearest)");
  check(cal.samples > 0 && cal.stats.size() == folded.graph.nodes.size(),
        "calibration does not match the model (was it recorded on another graph?)");
  check(o.wide_bits >= 8 && o.wide_bits <= 16, "wide activations have 9 to 16 bits (8: none), not " +
                                                   std::to_string(o.wide_bits));
  const Plan plan = plan_graph(folded.graph, o.float_nodes, o.unsigned_activations, o.wide_bits);
  const size_t N = plan.graph.nodes.size();

  // amax of every quantization point, by float node.
  std::vector<double> amax(folded.graph.nodes.size(), 0.0);
  std::vector<std::string> methods(folded.graph.nodes.size());
  // A wide point's amax is its largest value: its step is 2^(bits - 8) times
  // finer than int8's, so clipping outliers buys it nothing (entropy and
  // percentile, tuned to int8, cost MobileNetV2 0.1% agreement there).
  std::vector<int> points, levels;  // levels: each point's grid above 0
  for (size_t i = 0; i < N; ++i) {
    if (!plan.own_scale[i]) continue;
    const int f = plan.stats_node[i];
    if (plan.bits[i] > 8) {
      amax[f] = compute_amax(cal.stats[f], AmaxMethod::Max);
      methods[f] = amax_method_name(AmaxMethod::Max);
      continue;
    }
    points.push_back(f);
    levels.push_back(positive_levels(plan.zero_point[i]));
  }
  clock->start("weight rounding");
  std::optional<FloatPassRecord> own_record;
  if (!record) {
    const FloatExecutor executor(folded);
    own_record.emplace(float_pass_record(executor, o, cal.samples));
    own_record->run(executor, cal.images);
    record = &*own_record;
  }
  const std::map<std::string, QuantizedWeights> weights = quantize_all_weights(folded, *record, o);
  std::optional<FloatModel> corrected;
  if (o.bias_correction) {
    std::set<std::string> kept_in_float;
    for (size_t i = 0; i < N; ++i)
      if (plan.in_float[i]) kept_in_float.insert(plan.graph.nodes[i].name);
    corrected = correct_biases(folded, weights, record->channel_means(), kept_in_float);
  }
  const FloatModel& biased = corrected ? *corrected : folded;
  QuantizedModel qm = model_header(checkpoint, plan, o, cal);
  clock->start("amax search");
  if (scores_models(o.method)) {
    AutoSearchPoints search{&plan.graph, points, {}, levels};
    for (size_t i = 0; i < N; ++i)
      if (plan.own_scale[i] && plan.bits[i] == 8) search.quantized_nodes.push_back(static_cast<int>(i));
    const auto build = [&](const std::vector<double>& trial, const std::vector<std::string>& trial_methods) {
      QuantizedModel m = qm;
      fill_quant(plan, biased, weights, trial, trial_methods, &m);
      return m;
    };
    if (o.method == AmaxMethod::AutoGlobal)
      choose_global_amax(search, build, cal, record->logits(), o.percentile, &amax, &methods);
    else
      (o.exhaustive_auto ? choose_auto_amax_exhaustive : choose_auto_amax)(search, build, cal, record->logits(),
                                                                           o.percentile, &amax, &methods);
  } else {
    for (size_t k = 0; k < points.size(); ++k) {
      amax[points[k]] = compute_amax(cal.stats[points[k]], o.method, o.percentile, levels[k]);
      methods[points[k]] = amax_method_name(o.method);
    }
  }

  clock->start("assembly");
  fill_quant(plan, biased, weights, amax, methods, &qm);
  qm.validate();
  return qm;
}

}  // namespace octet
