// PRelu on the CPU: each int8 value through its channel's 256-entry table
// (graph/ops/prelu.h), made once per engine from the scales (bind): one value
// at a time, or 16 channels at a time by AVX-512 gathers (prelu_vnni.cpp)
// where the CPU has them; pixels shared among the threads.
#include <memory>
#include <vector>

#include "common/error.h"
#include "graph/ops/prelu.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"
#include "runtime/cpu/prelu_simd.h"

namespace octet::cpu {

namespace {
// Pixels per unit of work shared among threads.
constexpr int64_t kPixelsPerTask = 64;

struct Tables : KernelData {
  std::vector<int8_t> levels;  // [C][256], and the gathers' slack
};

std::unique_ptr<KernelData> bind(const NodeView& v, const KernelData*) {
  auto t = std::make_unique<Tables>();
  t->levels = ops::prelu_tables(v.quant().slope, v.model.quant[v.node().inputs[0]].scale, v.quant().scale,
                                v.input_zero_point(), v.quant().zero_point);
  t->levels.resize(t->levels.size() + kChannelTableSlack);
  return t;
}

// lookup(first pixel, pixel count) over every pixel of the batch, in tasks.
template <typename Lookup>
void for_pixel_tasks(const KernelArgs& a, Lookup lookup) {
  const int64_t channels = a.node.output().c, pixels = a.batch * a.node.output().numel() / channels;
  const int64_t tasks = (pixels + kPixelsPerTask - 1) / kPixelsPerTask;
  parallel_for(tasks, pixels * channels >= kMinParallelWork, [&](int64_t t) {
    const int64_t first = t * kPixelsPerTask;
    lookup(first, pixels - first < kPixelsPerTask ? pixels - first : kPixelsPerTask);
  });
}

void run(const KernelArgs& a) {
  const int8_t* levels = static_cast<const Tables*>(a.bound)->levels.data();
  const int64_t channels = a.node.output().c;
  for_pixel_tasks(a, [&](int64_t first, int64_t count) {
    for (int64_t p = first; p < first + count; ++p) {
      const int8_t* in = a.inputs[0] + p * channels;
      int8_t* out = a.y + p * channels;
      for (int64_t c = 0; c < channels; ++c) out[c] = levels[c * 256 + in[c] + 128];
    }
  });
}

void run_vnni(const KernelArgs& a) {
#if defined(OCTET_CPU_VNNI)
  const int8_t* levels = static_cast<const Tables*>(a.bound)->levels.data();
  const int64_t channels = a.node.output().c;
  for_pixel_tasks(a, [&](int64_t first, int64_t count) {
    vnni::channel_lookup(a.inputs[0] + first * channels, count, channels, levels, a.y + first * channels);
  });
#else
  fail("prelu-avx512: this build has no AVX-512 kernels");
#endif
}
}  // namespace

extern const Kernel prelu_vnni_kernel = {Op::PRelu, "prelu-avx512", KernelPath::Avx512Vnni, runs_every_node_on_vnni,
                                         nullptr, run_vnni, bind};
extern const Kernel prelu_kernel = {Op::PRelu, "prelu-table", KernelPath::Reference, runs_every_node, nullptr, run,
                                    bind};

}  // namespace octet::cpu
