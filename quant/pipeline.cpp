#include "quant/pipeline.h"

#include "common/error.h"
#include "graph/op.h"

namespace octet {

double calibration_macs(const Graph& graph, int64_t samples) {
  const std::vector<ActShape> shapes = graph.shapes();
  double per_image = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) per_image += op_macs(graph.nodes[i], shapes, static_cast<int>(i));
  return per_image * static_cast<double>(samples);
}

bool NamedQuantizeOptions::large_network_defaults(const Checkpoint& checkpoint) const {
  return (method.empty() || weight_rounding.empty()) &&
         calibration_macs(checkpoint.graph, calibration_samples) > kFullDefaultsMacs;
}

QuantizeOptions NamedQuantizeOptions::options(const Checkpoint& checkpoint) const {
  const bool large = large_network_defaults(checkpoint);
  QuantizeOptions o;
  o.method = amax_method_from_name(!method.empty() ? method : large ? "auto-global" : "auto");
  check(granularity == "per-channel" || granularity == "per-tensor", "--granularity must be per-channel or per-tensor");
  o.per_channel = granularity == "per-channel";
  o.scheme = scheme;
  o.percentile = percentile;
  o.weight_rounding = !weight_rounding.empty() ? weight_rounding : large ? "nearest" : "gptq";
  o.auto_samples = auto_samples;
  o.float_nodes = float_nodes;
  o.equalize = equalize;
  o.bias_correction = bias_correction;
  check(activations.empty() || activations == "signed" || activations == "unsigned",
        "--activations must be signed or unsigned (it is '" + activations + "')");
  o.unsigned_activations = activations.empty() ? scheme != "lab" : activations == "unsigned";
  check(wide_bits == 0 || (wide_bits >= 8 && wide_bits <= 16),
        "--wide-bits must be 8 (none) to 16 (it is " + std::to_string(wide_bits) + ")");
  o.wide_bits = wide_bits != 0 ? wide_bits : scheme == "lab" ? 8 : kDefaultWideBits;
  return o;
}

namespace {
ModelInput input_of(const Graph& graph, const std::string& dataset, int classes) {
  const ActShape in = graph.shapes()[0];
  return ModelInput{dataset, in.c, in.h, in.w, classes};
}
}  // namespace

ModelInput model_input(const Checkpoint& c) {
  return input_of(c.graph, c.dataset, static_cast<int>(c.classes.size()));
}

ModelInput model_input(const QuantizedModel& m) { return input_of(m.graph, m.dataset, m.num_classes()); }

std::vector<float> calibration_images(const Checkpoint& c, const DataOptions& data, int64_t samples) {
  check(samples > 0, "the calibration set is empty (--calib-samples must be positive)");
  const Dataset picked =
      load_calibration_images(model_input(c), data, [&](int64_t size) { return calibration_indices(size, samples); });
  return normalized_images(picked, c.mean, c.std, 0, picked.size());
}

namespace {
// Folding and calibration belong to the caller's "load" phase.
QuantizeResult quantize_loaded(const Checkpoint& c, std::vector<float> images, const QuantizeOptions& options,
                               PhaseClock* clock) {
  QuantizeResult r;
  r.folded = fold_for_inference(c.graph, c.params);
  if (options.equalize) {
    Equalization e = equalize_cross_layer(r.folded);
    r.folded = std::move(e.model);
    r.equalized = std::move(e.pairs);
  }
  const FloatExecutor executor(r.folded);
  const int64_t numel = executor.shapes()[0].numel();
  check(!images.empty() && static_cast<int64_t>(images.size()) % numel == 0,
        "the calibration images do not fit the model's input " + to_string(executor.shapes()[0]));
  const int64_t count = static_cast<int64_t>(images.size()) / numel;
  clock->start("calibration pass");
  FloatPassRecord record = float_pass_record(executor, options, count);
  r.calibration = calibrate(executor, std::move(images), count, 128,
                            [&](int node, const FloatTensor& act, int64_t first) { record.observe(node, act, first); });
  r.model = quantize(c, r.folded, r.calibration, options, clock, &record);
  r.model.equalized = options.equalize;
  return r;
}
}  // namespace

QuantizeResult quantize_checkpoint(const Checkpoint& c, const DataOptions& data, const QuantizeOptions& options,
                                   int64_t calibration_samples, PhaseClock* clock) {
  PhaseClock own_clock;
  if (!clock) clock = &own_clock;
  clock->start("load");
  return quantize_loaded(c, calibration_images(c, data, calibration_samples), options, clock);
}

QuantizeResult quantize_checkpoint_on(const Checkpoint& c, std::vector<float> images, const QuantizeOptions& options,
                                      PhaseClock* clock) {
  PhaseClock own_clock;
  if (!clock) clock = &own_clock;
  clock->start("load");
  return quantize_loaded(c, std::move(images), options, clock);
}

}  // namespace octet
