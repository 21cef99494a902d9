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

QuantizeResult quantize_checkpoint(const Checkpoint& c, const std::string& data_dir, const QuantizeOptions& options,
                                   int64_t calibration_samples) {
  QuantizeResult r;
  r.folded = fold_for_inference(c.graph, c.params);
  const FloatExecutor executor(r.folded);
  const Dataset train = load_dataset(c.dataset, resolve_data_dir(c.dataset, data_dir), Split::Train);
  const std::vector<int64_t> indices = calibration_indices(train, calibration_samples);
  r.calibration = calibrate(executor, normalized_images(train, c.mean, c.std, indices),
                            static_cast<int64_t>(indices.size()));
  r.model = quantize(c, r.folded, r.calibration, options);
  return r;
}

}  // namespace octet
