// What may be called concurrently (runtime/cpu/cpu_engine.h): one CpuEngine run
// from several threads at once gives the same bits as one thread running the
// same batches in turn.
#include <gtest/gtest.h>

#include <thread>

#include "runtime/cpu/cpu_engine.h"
#include "tests/support/random_model.h"

namespace octet {
namespace {

TEST(CpuEngineThreads, ConcurrentRunsGiveTheBitsOfOneThread) {
  const QuantizedModel model =
      quantize_random(random_checkpoint("resnet20", ModelOptions{}, 21), quick_quantize_options(), 16);
  const CpuEngine engine(model);
  const ActShape in = model.graph.shapes()[0];
  constexpr int kThreads = 4, kRuns = 6;
  std::vector<std::vector<float>> images;
  std::vector<Int32Tensor> expected;
  for (int t = 0; t < kThreads; ++t) {
    const int64_t batch = 1 + t * 3;  // different batch sizes: different buffer sizes
    images.push_back(random_images(batch, in, 100 + t));
    expected.push_back(engine.run(images.back().data(), batch));
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const int64_t batch = 1 + t * 3;
      for (int run = 0; run < kRuns; ++run)
        mismatches[t] += engine.run(images[t].data(), batch).data != expected[t].data;
    });
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace octet
