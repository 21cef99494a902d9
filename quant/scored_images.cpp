#include "quant/scored_images.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <numeric>

namespace octet {

namespace {
// Softmax of one row of logits.
std::vector<double> softmax(const float* logits, int64_t classes) {
  const double top = *std::max_element(logits, logits + classes);
  std::vector<double> p(static_cast<size_t>(classes));
  double sum = 0;
  for (int64_t k = 0; k < classes; ++k) sum += p[k] = std::exp(logits[k] - top);
  for (double& v : p) v /= sum;
  return p;
}
}  // namespace

std::vector<int64_t> most_sensitive_images(const FloatTensor& logits, int64_t count) {
  const int64_t n = logits.dim(0), classes = logits.shape.back(), rows = logits.numel() / classes;
  std::vector<double> sensitivity(static_cast<size_t>(n), 0.0);
  for (int64_t r = 0; r < rows; ++r) {  // an image's, or a pixel's of image r / (rows / n)
    const std::vector<double> p = softmax(logits.ptr() + r * classes, classes);
    sensitivity[r / (rows / n)] += 1 - std::inner_product(p.begin(), p.end(), p.begin(), 0.0);
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return sensitivity[a] > sensitivity[b]; });
  order.resize(static_cast<size_t>(std::min(n, count)));
  return order;
}

// Per image, its rows' KL(softmax(target) || softmax(logits)) summed (scored_images.h).
void softmax_kl(const float* target, const float* logits, int64_t images, int64_t per_image, int64_t classes,
                double* kl) {
  std::fill(kl, kl + images, 0.0);
  for (int64_t r = 0; r < images * per_image / classes; ++r) {
    const float* t = target + r * classes;
    const float* l = logits + r * classes;
    const double tmax = *std::max_element(t, t + classes), lmax = *std::max_element(l, l + classes);
    double tsum = 0, lsum = 0;
    for (int64_t k = 0; k < classes; ++k) {
      tsum += std::exp(t[k] - tmax);
      lsum += std::exp(l[k] - lmax);
    }
    double& image_kl = kl[r * classes / per_image];
    for (int64_t k = 0; k < classes; ++k) {
      const double log_p = t[k] - tmax - std::log(tsum), log_q = l[k] - lmax - std::log(lsum);
      image_kl += std::exp(log_p) * (log_p - log_q);
    }
  }
}

std::vector<int64_t> output_sizes(const Graph& graph) {
  if (graph.output_count == 1 && !has_output_views(graph)) return {};
  const std::vector<ActShape> shapes = graph.shapes();
  std::vector<int64_t> sizes;
  for (int o : graph.outputs()) sizes.push_back(shapes[o].numel());
  return sizes;
}

ScoredImages::ScoredImages(const Calibration& cal, const FloatTensor& logits, const std::vector<int64_t>& output_sizes)
    : images_(cal.images.data()), per_image_(static_cast<int64_t>(cal.images.size()) / cal.samples) {
  const int64_t per_image = logits.numel() / std::max<int64_t>(1, logits.dim(0));
  if (!output_sizes.empty()) {
    order_.resize(static_cast<size_t>(std::min(logits.dim(0), kScoredImages)));
    std::iota(order_.begin(), order_.end(), int64_t{0});
  } else {
    order_ = most_sensitive_images(logits, kScoredImages);
  }
  Shape shape = logits.shape;
  shape[0] = static_cast<int64_t>(order_.size());
  target_ = FloatTensor(shape);
  for (size_t r = 0; r < order_.size(); ++r)
    std::copy_n(logits.ptr() + order_[r] * per_image, per_image, target_.ptr() + r * per_image);
  if (output_sizes.empty()) return;
  int64_t offset = 0;
  for (int64_t size : output_sizes) {
    double energy = 0;
    for (int64_t r = 0; r < count(); ++r) {
      const float* values = target_.ptr() + r * per_image + offset;
      for (int64_t v = 0; v < size; ++v) energy += double(values[v]) * values[v];
    }
    energy /= static_cast<double>(std::max<int64_t>(1, count()));
    weights_.insert(weights_.end(), static_cast<size_t>(size), energy > 0 ? 1.0 / energy : 1.0);
    offset += size;
  }
}

void ScoredImages::score(const float* logits, int64_t first, int64_t rows, double* score) const {
  const int64_t per_image = logits_per_image();
  const float* target = target_.ptr() + first * per_image;
  if (weights_.empty()) return softmax_kl(target, logits, rows, per_image, classes(), score);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t v = 0; v < per_image; ++v) {
      const double e = double(target[r * per_image + v]) - logits[r * per_image + v];
      sum += weights_[static_cast<size_t>(v)] * e * e;
    }
    score[r] = sum;
  }
}

// Runs nodes [first_node, end) of `engine` on images [first, first + rows)
// and returns their logits, laid out as ScoredImages' target; the input is read only from node 0.
FloatTensor run_chunk(const CpuEngine& engine, const ScoredImages& images, int64_t first, int64_t rows, int first_node,
                      int end, const CpuEngine::Given& given) {
  std::vector<float> buffer;
  const float* input = images.input(first_node, first, rows, &buffer);
  const Graph& g = engine.model().graph;
  if (g.output_count == 1) return engine.dequantize_logits(engine.run_nodes(input, rows, first_node, end, given));
  const std::vector<Int32Tensor> outputs = engine.run_nodes_outputs(input, rows, first_node, end, given);
  FloatTensor logits({rows, images.logits_per_image()});
  int64_t offset = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const FloatTensor values = engine.dequantize_logits(outputs[k], g.first_output() + static_cast<int>(k));
    const int64_t size = values.numel() / rows;
    for (int64_t r = 0; r < rows; ++r)
      std::copy_n(values.ptr() + r * size, size, logits.ptr() + r * images.logits_per_image() + offset);
    offset += size;
  }
  return logits;
}

int64_t auto_chunk(int64_t images) {
  const int64_t threads = omp_get_max_threads();
  return std::max<int64_t>(1, std::min(kAutoChunk, (images + threads - 1) / threads));
}

// Per scored image, the KL of `engine`'s logits from float's, every node run.
std::vector<double> score_whole_model(const CpuEngine& engine, const ScoredImages& images) {
  const int64_t samples = images.count();
  std::vector<double> kl(static_cast<size_t>(samples));
  std::exception_ptr error;
  const int64_t chunk = auto_chunk(samples);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t first = 0; first < samples; first += chunk) {
    try {
      const int64_t rows = std::min(chunk, samples - first);
      const int nodes = static_cast<int>(engine.model().graph.nodes.size());
      const FloatTensor logits = run_chunk(engine, images, first, rows, 0, nodes, {});
      images.score(logits.ptr(), first, rows, kl.data() + first);
    } catch (...) {
#pragma omp critical(octet_auto_error)
      error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return kl;
}

}  // namespace octet
