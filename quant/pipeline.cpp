#include "quant/pipeline.h"

#include "common/error.h"

namespace octet {

std::string resolve_data_dir(const std::string& dataset, const std::string& dir) {
  if (!dir.empty()) return dir;
  const std::string fallback = dataset_info(dataset).default_dir;
  check(!fallback.empty(), "--data DIR is required for dataset '" + dataset + "' (the folder holding its files)");
  return fallback;
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
