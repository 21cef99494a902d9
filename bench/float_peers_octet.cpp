// The float peer without LibTorch (octet): octet's own float executor (Eigen).
#include <cstdio>

#include "bench/float_peers.h"
#include "bench/timing.h"
#include "graph/float_executor.h"
#include "graph/fold.h"

namespace octet {

struct FloatPeers::Impl {
  FloatExecutor executor;
};

FloatPeers::FloatPeers(const Checkpoint& checkpoint, int, bool)
    : impl_(new Impl{FloatExecutor(fold_for_inference(checkpoint.graph, checkpoint.params))}) {
  std::fprintf(stderr, "note: built without LibTorch: the float baseline is octet's own float executor (Eigen), "
                       "slower than LibTorch's\n");
}

void FloatPeers::measure(const float* images, const ActShape&, int64_t batch, bool, int warmup, int iterations,
                         std::vector<Measurement>& rows) {
  rows.push_back(timed_row(batch, "octet-float-cpu", "float32",
                           time_calls(warmup, iterations, [&] { impl_->executor.run(images, batch); })));
}

FloatPeers::~FloatPeers() = default;

}  // namespace octet
