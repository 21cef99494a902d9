// Data-parallel training's process group on torch's own c10d: the rendezvous
// from torchrun's environment variables (RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT) through a TCPStore that rank 0 hosts, then Gloo on
// the CPU or NCCL on CUDA (one GPU per rank). Failures of a collective (a peer
// that exited, or one silent past the timeout) become octet errors naming the rank.
#pragma once

#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace octet {

struct DistributedEnvironment {
  int rank = 0, world_size = 1, local_rank = 0;
  int local_world_size = 1;  // ranks on this machine (LOCAL_WORLD_SIZE; default: 1)
  std::string master_addr;
  int master_port = 0;
  bool distributed() const { return world_size > 1; }
};

// Reads torchrun's variables; none set (or WORLD_SIZE=1) is a single process.
// Inconsistent or malformed values are errors naming the variable.
DistributedEnvironment read_distributed_environment();

// The device a rank trains on: on CUDA, LOCAL_RANK picks the GPU.
torch::Device rank_device(const std::string& device, const DistributedEnvironment& env);

// Why this build cannot make the process group of data-parallel training on
// `device` ("cpu": Gloo, "cuda": NCCL), or "" when it can.
std::string process_group_missing(const std::string& device);

class ProcessGroup {
 public:
  // Blocks until all ranks have joined (or `timeout` passes).
  ProcessGroup(const DistributedEnvironment& env, const torch::Device& device, std::chrono::seconds timeout);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return env_.rank; }
  int size() const { return env_.world_size; }

  // An all-reduce under way; wait() rethrows its failure as an octet error.
  class Pending {
   public:
    Pending() = default;
    Pending(const ProcessGroup* group, c10::intrusive_ptr<c10d::Work> work) : group_(group), work_(std::move(work)) {}
    void wait();
    bool started() const { return work_.defined(); }

   private:
    const ProcessGroup* group_ = nullptr;
    c10::intrusive_ptr<c10d::Work> work_;
  };

  // Sums `tensor` in place over the ranks, asynchronously.
  Pending all_reduce_sum(torch::Tensor tensor) const;
  // Copies rank 0's values into `tensors` on every rank.
  void broadcast_from_rank0(const std::vector<torch::Tensor>& tensors) const;

 private:
  // Throws an octet error for a failed collective, naming this rank.
  [[noreturn]] void fail_collective(const std::string& what, const std::string& cause) const;
  template <typename Collective>
  auto guarded(const char* what, Collective&& collective) const -> decltype(collective());

  struct Backend;
  DistributedEnvironment env_;
  std::chrono::seconds timeout_;
  std::unique_ptr<Backend> backend_;
};

}  // namespace octet
