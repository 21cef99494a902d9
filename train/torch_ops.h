// The LibTorch trainer's kernel for each operator (graph/op.h), in one table
// (torch_ops.cpp): the initial value of each parameter the operator's
// definition lists, and its forward pass with torch functionals. GraphNet
// refuses a graph holding an operator that has no entry, naming it.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "graph/op.h"

namespace octet {

// A node's parameters and buffers (those its operator owns).
struct TorchParams {
  torch::Tensor weight, bias, running_mean, running_var;
};

struct TorchOp {
  Op op;
  // The initial value of one of the node's parameters (graph/op.h params),
  // given its inputs' shapes; null: it owns none.
  torch::Tensor (*init)(const Node& n, const std::vector<ActShape>& in, const ParamShape& p);
  torch::Tensor (*forward)(const Node& n, const std::vector<torch::Tensor>& inputs, const TorchParams& params,
                           bool training);
};

// The entry of `op`, or null when the trainer has none.
const TorchOp* torch_op(Op op);

}  // namespace octet
