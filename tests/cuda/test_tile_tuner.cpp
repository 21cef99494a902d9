// The measured tile choice of cuda-imma (runtime/cuda/tile_tuner.h) with a
// fake timer: the candidates, the fastest kept, each shape timed once.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <thread>

#include "runtime/cuda/tile_tuner.h"
#include "tests/support/test_util.h"

namespace octet::cuda::igemm {
namespace {

Problem conv(int batch, int size, int in_c, int out_c, int kernel, int stride) {
  return conv_problem(batch, size, size, in_c, out_c, kernel, stride, kernel / 2);
}

const std::vector<int> kAllResident(kTileCount, 2);

std::vector<int> tiles_of(const std::vector<TileLaunch>& launches) {
  std::vector<int> tiles;
  for (const TileLaunch& l : launches) tiles.push_back(l.tile);
  return tiles;
}

std::vector<TileLaunch> whole(const std::vector<int>& tiles) {
  std::vector<TileLaunch> launches;
  for (const int t : tiles) launches.push_back({t, 1});
  return launches;
}

// Every tile that can run the shape, the cost model's choice first.
TEST(TileCandidates, AreTheTilesThatCanRunTheShapeWithTheModelsChoiceFirst) {
  for (const Problem& p : {conv(256, 32, 64, 64, 3, 1), conv(256, 32, 3, 64, 3, 1), conv(1, 4, 512, 512, 3, 1),
                           conv(256, 32, 64, 128, 1, 2)}) {
    const std::vector<int> candidates = tiles_of(tile_candidates(p, kAllResident.data(), 132));
    ASSERT_FALSE(candidates.empty()) << describe(p);
    EXPECT_EQ(candidates.front(), choose_tile(p, kAllResident.data(), 132)) << describe(p);
    std::vector<int> runnable;
    for (int t = 0; t < kTileCount; ++t)
      if (unsupported(p, t).empty()) runnable.push_back(t);
    std::vector<int> sorted = candidates;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, runnable) << describe(p);
  }
  // Tiles that fit no multiprocessor are left out.
  std::vector<int> resident = kAllResident;
  const Problem p = conv(256, 32, 64, 64, 3, 1);
  const int first = choose_tile(p, resident.data(), 132);
  resident[size_t(first)] = 0;
  const std::vector<int> without = tiles_of(tile_candidates(p, resident.data(), 132));
  EXPECT_EQ(std::count(without.begin(), without.end(), first), 0);
  EXPECT_EQ(without.size() + 1, tile_candidates(p, kAllResident.data(), 132).size());
}

TEST(TileCandidates, EnvironmentLeavesOnlyTheForcedTile) {
  const Problem p = conv(8, 16, 64, 64, 3, 1);
  ::setenv("OCTET_IMMA_TILE", "m128n128k128", 1);
  EXPECT_EQ(tile_candidates(p, kAllResident.data(), 132), whole({tile_index("m128n128k128")}));
  ::setenv("OCTET_IMMA_TILE", "m64n64k64w", 1);
  EXPECT_TRUE(tile_candidates(p, kAllResident.data(), 132).empty()) << "a tile that cannot run the layer";
  // With split K, the forced tile as split_slices splits it (so each tile's split can be run alone).
  const Problem latency = conv(1, 4, 512, 512, 3, 1);
  ::setenv("OCTET_IMMA_TILE", "m16n64k128s4", 1);
  const std::vector<TileLaunch> split = tile_candidates(latency, kAllResident.data(), 132, true);
  ASSERT_EQ(split.size(), 1u);
  EXPECT_EQ(split.front().tile, tile_index("m16n64k128s4"));
  EXPECT_EQ(split.front().slices, split_slices(latency, split.front().tile, 132));
  EXPECT_GT(split.front().slices, 1);
  EXPECT_EQ(tile_candidates(latency, kAllResident.data(), 132), whole({tile_index("m16n64k128s4")}));
  ::unsetenv("OCTET_IMMA_TILE");
}

TEST(TileTuner, KeepsTheFastestAndTimesEachShapeOnce) {
  const Problem layer1 = conv(256, 32, 64, 64, 3, 1), layer4 = conv(256, 4, 512, 512, 3, 1);
  const std::vector<TileLaunch> candidates = whole({4, 0, 1, 9});
  std::map<int, double> speed = {{4, 0.050}, {0, 0.031}, {1, 0.029}, {9, 0.040}};
  int measured = 0;
  TileTuner tuner;
  const auto measure = [&](const TileLaunch& l) {
    ++measured;
    return speed.at(l.tile);
  };
  const int per_shape = 4 * TileTuner::kRounds;
  EXPECT_EQ(tuner.choose(layer1, candidates, measure).tile, 1);
  EXPECT_EQ(measured, per_shape);
  speed[1] = 1.0;  // the same shape again (another layer, or another plan): not timed again
  EXPECT_EQ(tuner.choose(layer1, candidates, measure).tile, 1);
  EXPECT_EQ(measured, per_shape);
  EXPECT_EQ(tuner.choose(layer4, candidates, measure).tile, 0) << "another shape is timed on its own";
  EXPECT_EQ(measured, 2 * per_shape);
  Problem other_batch = layer1;
  other_batch.batch = 1;
  tuner.choose(other_batch, candidates, measure);
  EXPECT_EQ(measured, 3 * per_shape) << "another batch size is another shape";

  ASSERT_EQ(tuner.decided().size(), 3u);
  const TunedShape& first = tuner.decided()[0];
  EXPECT_EQ(first.launch.tile, 1);
  ASSERT_EQ(first.trials.size(), 4u);
  EXPECT_EQ(first.trials[0].launch.tile, 4);
  EXPECT_DOUBLE_EQ(first.trials[0].milliseconds, 0.050);
  EXPECT_EQ(describe(first.problem), "256x32x32x64 -> 64, 3x3 stride 1");
}

// A tile split and whole are two candidates: the faster as timed is kept,
// whichever the cost model ranked first (the split's sums out and back in
// may cost more than its idle multiprocessors gain).
TEST(TileTuner, TimesATileSplitAndWhole) {
  const Problem latency = conv(1, 4, 512, 512, 3, 1);
  const int s4 = tile_index("m16n64k128s4");
  const std::vector<TileLaunch> candidates = {{s4, 12}, {s4, 1}};
  for (const double split_ms : {0.004, 0.020}) {
    TileTuner tuner;
    const TileLaunch chosen =
        tuner.choose(latency, candidates, [&](const TileLaunch& l) { return l.slices > 1 ? split_ms : 0.012; });
    EXPECT_EQ(chosen.tile, s4);
    EXPECT_EQ(chosen.slices, split_ms < 0.012 ? 12 : 1) << split_ms;
    ASSERT_EQ(tuner.decided().back().trials.size(), 2u);
    EXPECT_EQ(tuner.decided().back().trials[0].launch.slices, 12);
  }
}

// A GPU still raising its clocks makes the first launches slow: every
// candidate is timed again once the others have run, the fastest time counts.
TEST(TileTuner, ClocksRisingWhileTimingDoNotDecide) {
  const std::map<int, double> speed = {{0, 0.010}, {1, 0.012}, {2, 0.020}};
  int calls = 0;
  const auto rising_clocks = [&](const TileLaunch& l) { return speed.at(l.tile) * (calls++ < 2 ? 4.0 : 1.0); };
  TileTuner tuner;
  EXPECT_EQ(tuner.choose(conv(256, 16, 128, 128, 3, 1), whole({0, 1, 2}), rising_clocks).tile, 0);
  const std::vector<TileTrial>& trials = tuner.decided().back().trials;
  ASSERT_EQ(trials.size(), 3u);
  EXPECT_DOUBLE_EQ(trials[0].milliseconds, 0.010) << "the fastest of its rounds";
  EXPECT_DOUBLE_EQ(trials[1].milliseconds, 0.012);
}

TEST(TileTuner, OneCandidateIsNotTimedAndBadTimesLose) {
  TileTuner tuner;
  int measured = 0;
  const Problem first_layer = conv(256, 32, 3, 64, 3, 1);
  EXPECT_EQ(tuner.choose(first_layer, whole({7}), [&](const TileLaunch&) { return ++measured, 1.0; }).tile, 7);
  EXPECT_EQ(measured, 0);
  EXPECT_TRUE(tuner.decided().back().trials.empty());
  EXPECT_EQ(tuner.decided().back().tuning_milliseconds, 0.0) << "nothing timed, no time spent";
  EXPECT_EQ(describe(first_layer), "256x32x32x4 -> 64, 3x3 stride 1") << "the first layer's 3 channels read as 4";

  // A failed or empty timing never wins; a tie goes to the model's order.
  const std::map<int, double> times = {{0, NAN}, {1, 0.0}, {2, 0.2}, {3, 0.2}, {4, INFINITY}};
  const auto timed = [&](const TileLaunch& l) { return times.at(l.tile); };
  EXPECT_EQ(tuner.choose(conv(64, 16, 64, 64, 3, 1), whole({0, 1, 2, 3, 4}), timed).tile, 2);
  EXPECT_EQ(tuner.choose(conv(64, 8, 64, 64, 3, 1), whole({4, 0, 1}), timed).tile, 4)
      << "nothing usable: the model's choice";
  EXPECT_NE(error_of([&] { tuner.choose(conv(2, 8, 64, 64, 3, 1), {}, [](const TileLaunch&) { return 1.0; }); })
                .find("no candidate tile for 2x8x8x64 -> 64"),
            std::string::npos);
}

// The wall time a shape's timing took is recorded: here each of the 2 x 3
// measurements sleeps at least 2 ms, so the timing took at least 12 ms.
TEST(TileTuner, RecordsHowLongTheTimingTook) {
  TileTuner tuner;
  const auto sleepy = [](const TileLaunch& l) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return 0.01 * (l.tile + 1);
  };
  const Problem layer = conv(256, 16, 128, 128, 3, 1);
  EXPECT_EQ(tuner.choose(layer, whole({0, 1, 2}), sleepy).tile, 0);
  const double first = tuner.decided().back().tuning_milliseconds;
  EXPECT_GE(first, 2.0 * 3 * TileTuner::kRounds);
  EXPECT_LT(first, 10e3) << "milliseconds, not microseconds";
  tuner.choose(layer, whole({0, 1, 2}), sleepy);
  ASSERT_EQ(tuner.decided().size(), 1u) << "a shape met again is neither timed nor recorded again";
}

}  // namespace
}  // namespace octet::cuda::igemm
