// What `auto` and `auto-global` score a candidate int8 model by: the KL of
// its logits from float's on the calibration images most sensitive to a
// change of the logits. A model of several outputs (a detection head's boxes
// and scores, which no softmax reads) is scored by its outputs' squared error
// instead, each relative to its own float values' energy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "calibrate/calibrate.h"
#include "common/tensor.h"
#include "runtime/cpu/cpu_engine.h"

namespace octet {

// Images one engine run scores: the unit of work shared between threads.
constexpr int64_t kAutoChunk = 32;
// The images of a chunk when `images` are run: up to kAutoChunk, and a chunk per thread at least (each runs its
// images on one thread: 32 images, one chunk, ran on one core).
int64_t auto_chunk(int64_t images);
// Of the calibration images, the search scores only this many, the most
// sensitive: they hold most of the KL (of the model with every amax at mse,
// the 512 most sensitive of 1,024 calibration images hold 99.5% on the zoo
// ResNet-20, 77-99.8% on the other zoo models; ResNet-20 chose every amax as
// it did on all 1,024), at half the int8 runs.
constexpr int64_t kScoredImages = 512;

// The calibration images whose logits (float's, logits_shape: a row of
// classes per image, or per pixel of an image of logits) are most sensitive
// to a change of the logits, at most `count`, most sensitive first: by
// 1 - sum(p^2) of the softmax p (summed over an image's pixels), the trace of
// the softmax's Fisher information, which scales the KL a small change of the
// logits causes; ties in image order.
std::vector<int64_t> most_sensitive_images(const FloatTensor& logits, int64_t count);

// KL(softmax(target) || softmax(logits)) of each of `images` images, each
// `per_image` logits in rows of `classes` (a pixel's, summed over the image).
// Unlike a plain logit MSE it weighs images near a decision boundary most,
// which is what decides whether int8 and float predict the same class.
void softmax_kl(const float* target, const float* logits, int64_t images, int64_t per_image, int64_t classes,
                double* kl);

// Per output of `graph`, its values per image (in the order of Graph::outputs); none where the model's one output
// is logits of classes (not several outputs, nor a detection head's rows: graph/output_view.h).
std::vector<int64_t> output_sizes(const Graph& graph);

// The scored images (the kScoredImages most sensitive), most sensitive first
// (most_sensitive_images). Confident images add little to any candidate's
// sum, so a candidate that trails is seen to trail early (CandidateRace); the
// order changes no sum's terms, only when they come. Of a model of several
// outputs or of detection rows (`output_sizes` given; `logits` holds each
// image's outputs one after another): the first kScoredImages images, in order.
class ScoredImages {
 public:
  ScoredImages(const Calibration& cal, const FloatTensor& logits, const std::vector<int64_t>& output_sizes);

  int64_t count() const { return target_.dim(0); }
  const FloatTensor& target() const { return target_; }  // float's logits, in this order
  int64_t classes() const { return target_.shape.back(); }
  int64_t logits_per_image() const { return target_.numel() / std::max<int64_t>(1, count()); }
  // Per image of [first, first + rows), the score of `logits` (a candidate's, as the target is laid out) in `score`:
  // softmax_kl; of several outputs (or rows), the sum over outputs of the squared error over the output's float
  // energy (its mean over the scored images).
  void score(const float* logits, int64_t first, int64_t rows, double* score) const;
  const char* criterion() const { return weights_.empty() ? "KL from float's logits" : "outputs' relative error"; }

  // What run_nodes from `first_node` reads of images [first, first + rows):
  // those images in this order, gathered into `buffer`, from node 0; nothing after.
  const float* input(int first_node, int64_t first, int64_t rows, std::vector<float>* buffer) const {
    if (first_node != 0) return nullptr;
    buffer->resize(static_cast<size_t>(rows * per_image_));
    for (int64_t r = 0; r < rows; ++r)
      std::copy_n(images_ + order_[first + r] * per_image_, per_image_, buffer->data() + r * per_image_);
    return buffer->data();
  }

 private:
  const float* images_;
  int64_t per_image_;
  std::vector<int64_t> order_;
  FloatTensor target_;
  std::vector<double> weights_;  // output_sizes given: per value of an image, 1 / its output's energy; else empty
};

// Runs nodes [first_node, end) of `engine` on images [first, first + rows)
// and returns their logits, laid out as ScoredImages' target; the input is read only from node 0.
FloatTensor run_chunk(const CpuEngine& engine, const ScoredImages& images, int64_t first, int64_t rows, int first_node,
                      int end, const CpuEngine::Given& given);

// Per scored image, the KL of `engine`'s logits from float's, every node run.
std::vector<double> score_whole_model(const CpuEngine& engine, const ScoredImages& images);

}  // namespace octet
