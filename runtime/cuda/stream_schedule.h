// Which convs the CUDA engine runs on its second stream. A conv whose inputs
// are all written some launching nodes before it (ResNet's projection
// shortcut, ready as soon as its block's first conv is; the parallel branches
// of an Inception block) starts there, on the side stream, beside the main
// stream's nodes, and the first node that reads its value waits for it: the
// multiprocessors a small conv leaves idle (ResNet-18's shortcuts run at
// 50-110 TOPS alone) go to its neighbour, and its launch gap disappears.
// Plain C++, so that the schedule and the memory plan that must follow it
// (device_layout.h plan_arena) are checked on any machine.
#pragma once

#include <vector>

#include "graph/graph.h"

namespace octet::cuda {

struct ValueLayout;

struct StreamSchedule {
  // Per node: for one run beside the main stream, the node before which it
  // is launched there (it waits for every node before that one); else -1.
  // Empty: every node runs on the main stream, in order.
  std::vector<int> fork;
  // Per node run beside: the node before which the main stream waits for it
  // (the first reader of the value it writes, else the output node); else -1.
  std::vector<int> join;
  std::vector<int> side_nodes;  // the nodes run beside, in order

  bool beside(int node) const { return !fork.empty() && fork[node] >= 0; }
};

// `eligible`: per node, whether its launches may run on the side stream (a
// conv the engine launches with no scratch buffer shared with other nodes).
// An eligible node runs beside when every value it reads is written by a node
// of the main stream and some conv or linear of the main stream runs between
// the last of those writers and the node. `values` says which buffer each node
// writes (a layer with a fused activation writes the activation's).
StreamSchedule schedule_streams(const Graph& g, const ValueLayout& values, const std::vector<bool>& eligible);

}  // namespace octet::cuda
