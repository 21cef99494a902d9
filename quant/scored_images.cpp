#include "quant/scored_images.h"

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

// Runs nodes [first_node, end) of `engine` on images [first, first + rows)
// and returns their logits; the input is read only from node 0.
FloatTensor run_chunk(const CpuEngine& engine, const ScoredImages& images, int64_t first, int64_t rows, int first_node,
                      int end, const CpuEngine::Given& given) {
  std::vector<float> buffer;
  return engine.dequantize_logits(
      engine.run_nodes(images.input(first_node, first, rows, &buffer), rows, first_node, end, given));
}

// Per scored image, the KL of `engine`'s logits from float's, every node run.
std::vector<double> score_whole_model(const CpuEngine& engine, const ScoredImages& images) {
  const int64_t samples = images.count(), per_image = images.logits_per_image();
  std::vector<double> kl(static_cast<size_t>(samples));
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t first = 0; first < samples; first += kAutoChunk) {
    try {
      const int64_t rows = std::min(kAutoChunk, samples - first);
      const int nodes = static_cast<int>(engine.model().graph.nodes.size());
      const FloatTensor logits = run_chunk(engine, images, first, rows, 0, nodes, {});
      softmax_kl(images.target().ptr() + first * per_image, logits.ptr(), rows, per_image, images.classes(),
                 kl.data() + first);
    } catch (...) {
#pragma omp critical(octet_auto_error)
      error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return kl;
}

}  // namespace octet
