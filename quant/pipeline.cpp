#include "quant/pipeline.h"

#include "common/error.h"

namespace octet {

QuantizeOptions NamedQuantizeOptions::options() const {
  QuantizeOptions o;
  o.method = amax_method_from_name(method);
  check(granularity == "per-channel" || granularity == "per-tensor", "--granularity must be per-channel or per-tensor");
  o.per_channel = granularity == "per-channel";
  o.scheme = scheme;
  o.percentile = percentile;
  o.weight_rounding = weight_rounding;
  o.auto_samples = auto_samples;
  return o;
}

std::vector<float> calibration_images(const Checkpoint& c, const std::string& data_dir, int64_t samples) {
  check(samples > 0, "the calibration set is empty (--calib-samples must be positive)");
  const Dataset picked = load_dataset_images(c.dataset, resolve_data_dir(c.dataset, data_dir), Split::Train,
                                             [&](int64_t size) { return calibration_indices(size, samples); });
  return normalized_images(picked, c.mean, c.std, 0, picked.size());
}

QuantizeResult quantize_checkpoint(const Checkpoint& c, const std::string& data_dir, const QuantizeOptions& options,
                                   int64_t calibration_samples, PhaseClock* clock) {
  PhaseClock own_clock;
  if (!clock) clock = &own_clock;
  clock->start("load");
  QuantizeResult r;
  r.folded = fold_for_inference(c.graph, c.params);
  const FloatExecutor executor(r.folded);
  std::vector<float> images = calibration_images(c, data_dir, calibration_samples);
  const int64_t count = static_cast<int64_t>(images.size()) / executor.shapes()[0].numel();
  clock->start("calibration pass");
  FloatPassRecord record = float_pass_record(executor, options, count);
  r.calibration = calibrate(executor, std::move(images), count, 128,
                            [&](int node, const FloatTensor& act, int64_t first) { record.observe(node, act, first); });
  r.model = quantize(c, r.folded, r.calibration, options, clock, &record);
  return r;
}

}  // namespace octet
