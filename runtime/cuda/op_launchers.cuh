// The CUDA runtime's launcher of each operator other than conv and linear
// (those run by the engine's GEMM paths), one entry per operator that
// op_support.h says the runtime runs: the engine launches a node through it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "graph/node_quant.h"

namespace octet::cuda {

// What a launcher of the operators other than conv and linear reads (their
// values as the device layout stores them, device_layout.h).
struct NodeLaunch {
  const Node& n;
  const NodeQuant& q;
  int64_t batch;
  const float* image;          // the input node: the plan's float input
  const int8_t* x;             // the first input's value
  const int8_t* x2;            // the second input's (add)
  int8_t* y;                   // the output's
  ActShape in, out;            // per-sample shapes of the first input and the output
  int in_c, out_c;             // channels as stored (padded)
  int64_t out_bytes;           // per sample, as stored
  cudaStream_t stream;
  std::vector<const int8_t*> inputs;  // every input's value (concat)
  std::vector<ActShape> in_shapes;    // and its per-sample shape
  std::vector<int> inputs_c;          // and its channels as stored
  const int8_t* table;                // activation: its 256 output levels, on the device
};

// The launcher of `op`'s nodes, or null when the runtime has none.
using OpLauncher = void (*)(const NodeLaunch& l);
OpLauncher launcher(Op op);

}  // namespace octet::cuda
