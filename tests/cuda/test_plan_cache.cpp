// The CUDA engine's per-batch-size plan cache (runtime/cuda/plan_cache.h):
// least recently used first out, on the CPU.
#include <gtest/gtest.h>

#include "runtime/cuda/plan_cache.h"

namespace octet::cuda {
namespace {

// Counts the values alive, so evictions are seen to destroy them.
struct Counted {
  explicit Counted(int* alive) : alive_(alive) { ++*alive_; }
  ~Counted() { --*alive_; }
  int* alive_;
};

TEST(PlanCache, EvictsTheLeastRecentlyUsed) {
  int alive = 0;
  PlanCache<int64_t, Counted> cache(3);
  for (int64_t batch : {1, 2, 3}) {
    EXPECT_EQ(cache.victim(), nullptr);
    cache.insert(batch, std::make_unique<Counted>(&alive));
  }
  EXPECT_EQ(alive, 3);
  EXPECT_EQ(cache.keys(), (std::vector<int64_t>{3, 2, 1}));
  ASSERT_NE(cache.find(1), nullptr);  // 1 is now the most recently used
  EXPECT_EQ(cache.keys(), (std::vector<int64_t>{1, 3, 2}));
  ASSERT_NE(cache.victim(), nullptr);
  EXPECT_EQ(*cache.victim(), 2);
  cache.insert(4, std::make_unique<Counted>(&alive));
  EXPECT_EQ(alive, 3);
  EXPECT_EQ(cache.find(2), nullptr);
  EXPECT_EQ(cache.keys(), (std::vector<int64_t>{4, 1, 3}));
  EXPECT_EQ(cache.size(), 3u);
  cache.clear();
  EXPECT_EQ(alive, 0);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(PlanCache, KeepsAtLeastOne) {
  int alive = 0;
  PlanCache<int64_t, Counted> cache(0);
  EXPECT_EQ(cache.capacity(), 1u);
  Counted& first = cache.insert(7, std::make_unique<Counted>(&alive));
  EXPECT_EQ(cache.find(7), &first);
  cache.insert(8, std::make_unique<Counted>(&alive));
  EXPECT_EQ(cache.find(7), nullptr);
  EXPECT_NE(cache.find(8), nullptr);
  EXPECT_EQ(alive, 1);
}

}  // namespace
}  // namespace octet::cuda
