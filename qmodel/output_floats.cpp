#include "qmodel/output_floats.h"

#include "common/error.h"
#include "graph/ops/float_reference.h"
#include "graph/output_decode.h"

namespace octet {

std::vector<std::vector<float>> output_floats(const QuantizedModel& model, const std::vector<ActShape>& shapes,
                                              const std::vector<std::vector<int32_t>>& logits, int64_t batch) {
  std::vector<std::vector<float>> values;
  for (int o : model.graph.outputs()) {
    const std::vector<int32_t>& acc = logits.at(static_cast<size_t>(o - model.graph.first_output()));
    const std::vector<float>& scale = model.quant[static_cast<size_t>(o)].logit_scale.data;
    values.emplace_back(acc.size());
    // Position by position (NHWC: a scale per channel, or one for all) on the threads.
    const int64_t channels = static_cast<int64_t>(scale.size());
    const int64_t positions = static_cast<int64_t>(acc.size()) / channels;
    check(positions * channels == static_cast<int64_t>(acc.size()),
          "output " + model.graph.nodes[o].name + ": " + std::to_string(acc.size()) + " values for " +
              std::to_string(channels) + " logit scales");
    float* out = values.back().data();
#pragma omp parallel for if (acc.size() >= ops::kMinParallelElements)
    for (int64_t p = 0; p < positions; ++p)
      for (int64_t c = 0; c < channels; ++c)
        out[p * channels + c] = static_cast<float>(acc[p * channels + c]) * scale[c];
  }
  decode_outputs(model.graph, shapes, values, batch);
  return values;
}

}  // namespace octet
