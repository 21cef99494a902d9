// The CUDA runtime's launcher of each operator other than conv and linear
// (those run by the engine's GEMM paths), one entry per operator that
// op_support.h says the runtime runs: the engine launches a node through it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "graph/node_quant.h"
#include "runtime/cuda/folded_input.h"
#include "runtime/cuda/programmatic_launch.cuh"

namespace octet::cuda {

// What a launcher of the operators other than conv and linear reads (their
// values as the device layout stores them, device_layout.h and stored_value.h).
struct NodeLaunch {
  const Node& n;
  const NodeQuant& q;
  int64_t batch;
  const float* image;                 // the input node: the plan's float input
  std::vector<const int8_t*> inputs;  // every input's value
  std::vector<ActShape> in_shapes;    // and its per-sample shape
  std::vector<int> inputs_c;          // and its channels as stored (padded)
  std::vector<int32_t> in_zero_points;  // and its zero point (q.zero_point is the output's)
  std::vector<float> in_scales;         // and its scale (levels per unit)
  int8_t* y;                          // the output's value
  ActShape out;                       // its per-sample shape
  int out_c;                          // its channels as stored
  int64_t out_bytes;                  // per sample, as stored
  KernelStream stream;  // programmatic where the engine launches so (programmatic_launch.cuh)
  const int8_t* table;  // on the device: an activation's 256 output levels, a PRelu's 256 per channel
  ImageFold fold;       // the input node: how its value is stored (folded_input.h)
  // On the device: a local response norm's m(S) by S; a group norm's affine (group_norm_affine).
  const double* multipliers = nullptr;

  // The first input (and the second, of an add).
  const int8_t* x() const { return inputs[0]; }
  const int8_t* x2() const { return inputs[1]; }
  const ActShape& in() const { return in_shapes[0]; }
  int in_c() const { return inputs_c[0]; }
  int32_t in_zero_point() const { return in_zero_points[0]; }
};

// The launcher of `op`'s nodes, or null when the runtime has none.
using OpLauncher = void (*)(const NodeLaunch& l);
OpLauncher launcher(Op op);

}  // namespace octet::cuda
