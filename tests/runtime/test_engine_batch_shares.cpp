// A batch of at least as many images as threads runs as shares, each thread
// every node on its images (runtime/cpu/cpu_engine.h): the logits are those
// of each image run alone, on every kernel path, for networks of every kind of
// node (dense, grouped, depthwise, dilated and rectangular convs, ImageNet's
// operators, float nodes, 16-bit and unsigned activations), for even and
// uneven shares; and a run inside the caller's own parallel region (no
// shares, no regions of the kernels' own) gives the same bits.
#include <gtest/gtest.h>
#include <omp.h>

#include <functional>
#include <string>
#include <vector>

#include "runtime/cpu/cpu_engine.h"
#include "runtime/cpu/kernels.h"
#include "tests/support/random_model.h"

namespace octet {
namespace {

struct Network {
  std::string name;
  std::function<QuantizedModel()> make;
};

QuantizedModel quantized(const Checkpoint& checkpoint, const std::function<void(QuantizeOptions*)>& change = {}) {
  QuantizeOptions options = quick_quantize_options();
  if (change) change(&options);
  return quantize_random(checkpoint, options, 16);
}

std::vector<Network> networks() {
  return {
      {"resnet20", [] { return quantized(random_checkpoint("resnet20", ModelOptions{}, 31)); }},
      {"lenet5_float_node",
       [] {
         return quantized(random_checkpoint("lenet5", ModelOptions{}, 32),
                          [](QuantizeOptions* o) { o->float_nodes = {"conv2"}; });
       }},
      {"grouped_wide_unsigned",
       [] {
         return quantized(random_grouped_checkpoint(33), [](QuantizeOptions* o) {
           o->wide_bits = 16;
           o->unsigned_activations = true;
         });
       }},
      {"dilated", [] { return quantized(random_dilated_checkpoint(34)); }},
      {"imagenet_ops", [] { return quantized(random_imagenet_ops_checkpoint(35)); }},
      {"rectangular", [] { return quantized(random_rectangular_checkpoint(36)); }},
  };
}

// The logits of each image of `images` run alone, image after image.
std::vector<int32_t> one_by_one(const CpuEngine& engine, const std::vector<float>& images, int64_t batch) {
  const int64_t numel = static_cast<int64_t>(images.size()) / batch;
  std::vector<int32_t> out;
  for (int64_t b = 0; b < batch; ++b) {
    const Int32Tensor logits = engine.run(images.data() + b * numel, 1);
    out.insert(out.end(), logits.data.begin(), logits.data.end());
  }
  return out;
}

class BatchShares : public ::testing::TestWithParam<size_t> {};

TEST_P(BatchShares, GiveEachImageItsLogitsAlone) {
  const Network network = networks()[GetParam()];
  const QuantizedModel model = network.make();
  const ActShape input = model.graph.shapes()[0];
  const int threads_before = omp_get_max_threads();
  const cpu::KernelPath path_before = cpu::kernel_path();
  for (cpu::KernelPath path : {cpu::KernelPath::Reference, cpu::KernelPath::Avx2, cpu::KernelPath::Avx512Vnni}) {
    if (!cpu::kernel_path_supported(path)) continue;
    cpu::set_kernel_path(path);
    const CpuEngine engine(model);
    // 2 threads: 8 images in 2 equal shares, 9 in 4 + 5, 3 in 2 + 1 (where idle threads sleep, as under
    // ctest: the networks are small); 3 threads: 6 in 3 shares.
    for (const auto& [threads, images_per_batch] :
         std::vector<std::pair<int, int64_t>>{{2, 8}, {2, 9}, {2, 3}, {3, 6}}) {
      const int64_t batch = images_per_batch;  // clang's OpenMP cannot capture a structured binding
      omp_set_num_threads(threads);
      const std::vector<float> images = random_images(batch, input, 40 + batch);
      const std::vector<int32_t> alone = one_by_one(engine, images, batch);
      EXPECT_EQ(engine.run(images.data(), batch).data, alone)
          << network.name << " on " << cpu::kernel_path_name(path) << ", " << batch << " images, " << threads
          << " threads";
      std::vector<int32_t> in_a_region;
#pragma omp parallel num_threads(2)
      {
#pragma omp single
        in_a_region = engine.run(images.data(), batch).data;
      }
      EXPECT_EQ(in_a_region, alone) << network.name << " inside a parallel region, on "
                                    << cpu::kernel_path_name(path);
    }
  }
  omp_set_num_threads(threads_before);
  cpu::set_kernel_path(path_before);
}

INSTANTIATE_TEST_SUITE_P(Networks, BatchShares, ::testing::Range<size_t>(0, 6),
                         [](const ::testing::TestParamInfo<size_t>& info) { return networks()[info.param].name; });

}  // namespace
}  // namespace octet
