#include "train/gradient_reducer.h"

#include "common/error.h"

namespace octet {

AllreduceMode allreduce_mode(const std::string& name) {
  if (name == "overlap") return AllreduceMode::Overlap;
  if (name == "after-backward") return AllreduceMode::AfterBackward;
  fail("--allreduce must be overlap or after-backward, not '" + name + "'");
}

GradientReducer::GradientReducer(const ProcessGroup& group, std::vector<torch::Tensor> params, AllreduceMode mode,
                                 double bucket_megabytes)
    : group_(group), params_(std::move(params)), mode_(mode) {
  check(bucket_megabytes > 0, "--bucket-mb must be positive");
  const double cap_bytes = bucket_megabytes * 1024 * 1024;
  bucket_of_.resize(params_.size());
  slot_of_.resize(params_.size());
  arrived_.assign(params_.size(), 0);
  // Backward produces the last layers' gradients first: bucket in reverse order.
  std::vector<std::vector<size_t>> groups;
  double bytes = cap_bytes;
  for (size_t i = params_.size(); i-- > 0;) {
    const torch::Tensor& p = params_[i];
    const double size = static_cast<double>(p.numel() * p.element_size());
    if (bytes + size > cap_bytes || params_[groups.back().front()].scalar_type() != p.scalar_type()) {
      groups.emplace_back();
      bytes = 0;
    }
    groups.back().push_back(i);
    bytes += size;
  }
  for (const std::vector<size_t>& members : groups) {
    Bucket bucket;
    int64_t numel = 0;
    for (size_t i : members) {
      bucket_of_[i] = buckets_.size();
      slot_of_[i] = bucket.params.size();
      bucket.params.push_back(i);
      bucket.offsets.push_back(numel);
      numel += params_[i].numel();
    }
    const torch::Tensor& first = params_[members.front()];
    bucket.flat = torch::zeros({numel}, first.options().requires_grad(false));
    bytes_per_step_ += numel * first.element_size();
    buckets_.push_back(std::move(bucket));
  }
  if (mode_ == AllreduceMode::Overlap)
    for (size_t i = 0; i < params_.size(); ++i)
      hooks_.push_back(params_[i].register_hook([this, i](const torch::Tensor& grad) { on_gradient(i, grad); }));
}

GradientReducer::~GradientReducer() {
  for (size_t i = 0; i < hooks_.size(); ++i) params_[i].remove_hook(hooks_[i]);
}

void GradientReducer::on_gradient(size_t param, const torch::Tensor& grad) {
  Bucket& bucket = buckets_[bucket_of_[param]];
  const torch::Tensor& p = params_[param];
  torch::NoGradGuard no_grad;
  torch::Tensor slot = bucket.flat.narrow(0, bucket.offsets[slot_of_[param]], p.numel()).view(p.sizes());
  if (arrived_[param]) {  // a parameter used twice in the graph: its gradients add up
    slot.add_(grad);
    return;
  }
  slot.copy_(grad);
  arrived_[param] = 1;
  ++bucket.arrived;
  start_ready_buckets();
}

void GradientReducer::start_ready_buckets() {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].arrived == buckets_[next_bucket_].params.size()) {
    Bucket& bucket = buckets_[next_bucket_++];
    bucket.pending = group_.all_reduce_sum(bucket.flat);
  }
}

void GradientReducer::synchronize() {
  torch::NoGradGuard no_grad;
  // After-backward mode copies every gradient here; in overlap mode only those of
  // parameters the backward pass did not reach (zero if they have none), so that
  // every rank's buckets match.
  for (size_t i = 0; i < params_.size(); ++i) {
    if (arrived_[i]) continue;
    const torch::Tensor& p = params_[i];
    Bucket& bucket = buckets_[bucket_of_[i]];
    torch::Tensor slot = bucket.flat.narrow(0, bucket.offsets[slot_of_[i]], p.numel()).view(p.sizes());
    if (p.grad().defined())
      slot.copy_(p.grad());
    else
      slot.zero_();
    arrived_[i] = 1;
    ++bucket.arrived;
  }
  start_ready_buckets();
  const double scale = 1.0 / static_cast<double>(group_.size());
  for (Bucket& bucket : buckets_) {
    bucket.pending.wait();
    bucket.flat.mul_(scale);
    for (size_t k = 0; k < bucket.params.size(); ++k) {
      torch::Tensor& p = params_[bucket.params[k]];
      const torch::Tensor average = bucket.flat.narrow(0, bucket.offsets[k], p.numel()).view(p.sizes());
      if (p.grad().defined())
        p.mutable_grad().copy_(average);
      else
        p.mutable_grad() = average.clone();
    }
    bucket.arrived = 0;
  }
  std::fill(arrived_.begin(), arrived_.end(), 0);
  next_bucket_ = 0;
}

}  // namespace octet
