// Mini-batch loader. With workers = 0 batches are made in the calling thread;
// with N > 0, N threads make them ahead into a bounded queue. Which samples form
// which batch, and every random augmentation, depend only on (seed, epoch,
// sample), so results are identical for every worker count. In data-parallel
// training each rank loads its share of the epoch's permutation, as PyTorch's
// DistributedSampler splits it: rank r takes positions r, r + W, r + 2W, ...
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "data/dataset.h"

namespace octet {

struct LoaderOptions {
  int batch_size = 128;
  bool shuffle = true;
  bool drop_last = false;
  bool augment = false;  // CIFAR: random crop 32 with padding 4, horizontal flip
  int workers = 0;
  int prefetch_per_worker = 2;  // bound of the queue, in batches per worker
  uint64_t seed = 0;
  int rank = 0, world_size = 1;  // data-parallel share (1: the whole dataset)
};

struct Batch {
  int64_t size = 0;
  std::vector<float> images;   // size x C x H x W, normalised
  std::vector<int64_t> labels;   // -1 where the dataset has none
  std::vector<int64_t> indices;  // dataset index of each sample
};

class Loader {
 public:
  Loader(const Dataset& data, const DatasetInfo& info, LoaderOptions options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  void start_epoch(int epoch);
  // Fills `out` with the next batch; returns false at the end of the epoch.
  bool next(Batch* out);
  int64_t batches_per_epoch() const;

 private:
  int64_t samples_per_epoch() const;  // this rank's share
  void make_batch(int64_t b, Batch* out) const;
  void worker_loop(int worker);
  void stop_workers();

  const Dataset& data_;
  const DatasetInfo& info_;
  LoaderOptions options_;
  int epoch_ = 0;
  std::vector<int64_t> order_;
  int64_t next_batch_ = 0;

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable ready_cv_, space_cv_;
  std::map<int64_t, Batch> ready_;
  bool stopping_ = false;
};

}  // namespace octet
