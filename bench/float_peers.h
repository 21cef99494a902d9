// The float baselines `octet bench infer` measures the int8 backends against,
// on the same network in the same run: LibTorch float32 on the CPU; on a GPU,
// LibTorch float32 and float16 (channels_last) eager and float16 captured in a
// CUDA graph (the peer users would pick); without LibTorch, octet's own float
// executor (Eigen), which is slower than LibTorch. float_peers_libtorch.cpp and
// float_peers_octet.cpp are the two, built into octet-torch and octet.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/measurement.h"
#include "graph/graph.h"
#include "models/checkpoint.h"

namespace octet {

class FloatPeers {
 public:
  // `cuda_requested`: a GPU backend is measured, so the GPU float peers are
  // wanted (a note says so when this LibTorch has no CUDA).
  FloatPeers(const Checkpoint& checkpoint, int threads, bool cuda_requested);
  ~FloatPeers();
  FloatPeers(const FloatPeers&) = delete;
  FloatPeers& operator=(const FloatPeers&) = delete;

  // Appends a row per float peer at this batch size (`images`: batch x C x H
  // x W); the CPU's LibTorch peer only with `cpu_requested`.
  void measure(const float* images, const ActShape& shape, int64_t batch, bool cpu_requested, int warmup,
               int iterations, std::vector<Measurement>& rows);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace octet
