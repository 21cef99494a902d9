#include "runtime/cuda/stream_schedule.h"

#include <algorithm>

#include "common/error.h"
#include "graph/op.h"
#include "runtime/cuda/device_layout.h"

namespace octet::cuda {

StreamSchedule schedule_streams(const Graph& g, const ValueLayout& values, const std::vector<bool>& eligible) {
  const int n_nodes = static_cast<int>(g.nodes.size());
  check(static_cast<int>(eligible.size()) == n_nodes, "schedule_streams: one eligibility per node");
  // The node whose launch writes each buffer's owner: a fused activation's is its layer.
  std::vector<int> writer(n_nodes);
  for (int i = 0; i < n_nodes; ++i) writer[i] = i;
  for (int i = 0; i < n_nodes; ++i)
    if (!values.fused_activation.empty() && values.fused_activation[i] >= 0) writer[values.fused_activation[i]] = i;

  StreamSchedule s;
  s.fork.assign(n_nodes, -1);
  s.join.assign(n_nodes, -1);
  for (int node = 0; node < g.output(); ++node) {
    if (!eligible[node] || g.nodes[node].inputs.empty()) continue;
    int ready = 0;  // the first node after every writer of its inputs
    bool inputs_on_main = true;
    for (const int in : g.nodes[node].inputs) {
      const int w = writer[values.owner[in]];
      inputs_on_main = inputs_on_main && !s.beside(w);
      ready = std::max(ready, w + 1);
    }
    bool work_beside = false;  // a conv or linear of the main stream to overlap
    for (int m = ready; m < node; ++m) work_beside = work_beside || (op_traits(g.nodes[m].op).weighted && !s.beside(m));
    if (!inputs_on_main || !work_beside) continue;
    const int value = values.written_owner(node);
    int join = g.output();
    for (int r = node + 1; r < join; ++r)
      for (const int in : g.nodes[r].inputs)
        if (values.owner[in] == value) join = std::min(join, r);
    s.fork[node] = ready, s.join[node] = join;
    s.side_nodes.push_back(node);
  }
  return s;
}

}  // namespace octet::cuda
