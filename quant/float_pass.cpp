#include "quant/float_pass.h"

#include <algorithm>
#include <cstring>

#include "graph/op.h"

namespace octet {

FloatPassRecord::FloatPassRecord(const FloatExecutor& executor, int64_t gptq_images, int64_t logit_images,
                                 int64_t mean_images)
    : mean_images_(mean_images) {
  if (gptq_images > 0) gptq_.emplace(executor, gptq_images);
  const Graph& g = executor.graph();
  output_offset_.assign(g.nodes.size(), -1);
  int64_t per_image = 0;
  for (int o : g.outputs()) {
    output_offset_[o] = per_image;
    per_image += executor.shapes()[o].numel();
  }
  if (logit_images > 0)
    logits_ = FloatTensor(g.output_count == 1 ? logits_shape(executor.shapes().back(), logit_images)
                                              : Shape{logit_images, per_image});
  channel_sums_.resize(g.nodes.size());
  summed_values_.assign(g.nodes.size(), 0);
  if (mean_images > 0)
    for (const Node& n : g.nodes)
      if (op_traits(n.op).weighted) channel_sums_[n.inputs[0]].assign(executor.shapes()[n.inputs[0]].c, 0.0);
}

std::vector<std::vector<double>> FloatPassRecord::channel_means() const {
  std::vector<std::vector<double>> means = channel_sums_;
  for (size_t i = 0; i < means.size(); ++i)
    for (double& m : means[i]) m /= std::max(1.0, summed_values_[i]);
  return means;
}

void FloatPassRecord::observe(int node, const FloatTensor& activation, int64_t first) {
  if (gptq_) gptq_->add(node, activation, first);
  std::vector<double>& sums = channel_sums_[node];
  if (!sums.empty() && first < mean_images_) {
    // NHWC (graph/layout.h): channel c of every position is c apart from the next.
    const int64_t C = static_cast<int64_t>(sums.size()), n = std::min(activation.dim(0), mean_images_ - first);
    const int64_t positions = activation.numel() / (activation.dim(0) * C);
    const float* x = activation.ptr();
    for (int64_t row = 0; row < n * positions; ++row)
      for (int64_t c = 0; c < C; ++c) sums[c] += x[row * C + c];
    summed_values_[node] += double(n) * positions;
  }
  if (output_offset_[node] < 0 || logits_.numel() == 0) return;
  const int64_t per_image = logits_.numel() / logits_.dim(0), n = std::min(activation.dim(0), logits_.dim(0) - first);
  const int64_t values = activation.numel() / activation.dim(0);  // this output's, per image
  for (int64_t r = 0; r < n; ++r)
    std::memcpy(logits_.ptr() + (first + r) * per_image + output_offset_[node], activation.ptr() + r * values,
                sizeof(float) * values);
}

void FloatPassRecord::run(const FloatExecutor& executor, const std::vector<float>& images, int64_t batch_size) {
  const int64_t image_numel = executor.shapes()[0].numel();
  const int64_t count =
      std::max({gptq_ ? gptq_->count() : 0, logits_.numel() ? logits_.dim(0) : int64_t{0}, mean_images_});
  for (int64_t first = 0; first < count; first += batch_size) {
    const int64_t n = std::min(batch_size, count - first);
    executor.run(images.data() + first * image_numel, n,
                 [&](int node, const FloatTensor& activation) { observe(node, activation, first); });
  }
}

}  // namespace octet
