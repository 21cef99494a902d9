// Averages the gradients of data-parallel ranks, in buckets of about
// `bucket_megabytes`. In Overlap mode a hook on every parameter copies its
// gradient into its bucket as the backward pass produces it, and a full bucket
// starts its all-reduce at once, so communication runs behind the rest of the
// backward pass (buckets start in one fixed order, the same on every rank, as
// c10d's collectives need). In AfterBackward mode every bucket starts after the
// backward pass: the whole all-reduce time is exposed, which is what a compute
// vs communication split measures.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "train/process_group.h"

namespace octet {

enum class AllreduceMode { Overlap, AfterBackward };

AllreduceMode allreduce_mode(const std::string& name);  // "overlap" or "after-backward"

class GradientReducer {
 public:
  GradientReducer(const ProcessGroup& group, std::vector<torch::Tensor> params, AllreduceMode mode,
                  double bucket_megabytes);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // After loss.backward(): waits for every bucket (starting those not yet
  // started) and leaves each parameter's gradient the average over the ranks.
  void synchronize();

  int64_t bytes_per_step() const { return bytes_per_step_; }
  size_t buckets() const { return buckets_.size(); }

 private:
  struct Bucket {
    torch::Tensor flat;
    std::vector<size_t> params;   // indices into params_
    std::vector<int64_t> offsets; // where each one's gradient starts in `flat`
    size_t arrived = 0;
    ProcessGroup::Pending pending;
  };
  void on_gradient(size_t param, const torch::Tensor& grad);
  void start_ready_buckets();

  const ProcessGroup& group_;
  std::vector<torch::Tensor> params_;
  AllreduceMode mode_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_, slot_of_;  // per parameter
  std::vector<char> arrived_;                // per parameter, this step
  std::vector<unsigned> hooks_;
  size_t next_bucket_ = 0;  // buckets start strictly in index order
  int64_t bytes_per_step_ = 0;
};

}  // namespace octet
