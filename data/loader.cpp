#include "data/loader.h"

#include <algorithm>
#include <random>

#include "common/error.h"

namespace octet {

namespace {
uint64_t mix(uint64_t x) {  // splitmix64 finaliser: a cheap, well-spread hash
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr int kCropPadding = 4;
}  // namespace

Loader::Loader(const Dataset& data, const DatasetInfo& info, LoaderOptions options)
    : data_(data), info_(info), options_(options) {
  check(options_.batch_size > 0, "batch size must be positive");
  check(options_.workers >= 0, "worker count must be >= 0");
  check(options_.prefetch_per_worker > 0, "prefetch must be positive");
  check(options_.world_size > 0 && options_.rank >= 0 && options_.rank < options_.world_size,
        "loader rank must lie in 0 .. world size - 1");
  check(data_.inputs.empty() || !options_.augment,
        "images given as model inputs (a .npy) cannot be augmented: their pixels are not known");
}

Loader::~Loader() { stop_workers(); }

// Like DistributedSampler: with drop_last the tail that does not split evenly is
// dropped, otherwise the permutation is padded by wrapping round to its start.
int64_t Loader::samples_per_epoch() const {
  const int64_t n = data_.size(), w = options_.world_size;
  return options_.drop_last ? n / w : (n + w - 1) / w;
}

int64_t Loader::batches_per_epoch() const {
  const int64_t n = samples_per_epoch(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

void Loader::start_epoch(int epoch) {
  stop_workers();
  epoch_ = epoch;
  next_batch_ = 0;
  order_.resize(static_cast<size_t>(data_.size()));
  for (int64_t i = 0; i < data_.size(); ++i) order_[i] = i;
  if (options_.shuffle) {
    std::mt19937_64 rng(mix(options_.seed ^ mix(static_cast<uint64_t>(epoch))));
    std::shuffle(order_.begin(), order_.end(), rng);
  }
  if (options_.world_size > 1) {
    std::vector<int64_t> share(static_cast<size_t>(samples_per_epoch()));
    for (size_t i = 0; i < share.size(); ++i)
      share[i] = order_[(static_cast<size_t>(options_.rank) + i * options_.world_size) % order_.size()];
    order_ = std::move(share);
  }
  ready_.clear();
  stopping_ = false;
  for (int w = 0; w < options_.workers; ++w) threads_.emplace_back(&Loader::worker_loop, this, w);
}

void Loader::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  space_cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Loader::worker_loop(int worker) {
  const int64_t total = batches_per_epoch();
  const int64_t window = static_cast<int64_t>(options_.workers) * options_.prefetch_per_worker;
  for (int64_t b = worker; b < total; b += options_.workers) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      space_cv_.wait(lock, [&] { return stopping_ || b < next_batch_ + window; });
      if (stopping_) return;
    }
    Batch batch;
    make_batch(b, &batch);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_[b] = std::move(batch);
    }
    ready_cv_.notify_all();
  }
}

bool Loader::next(Batch* out) {
  if (next_batch_ >= batches_per_epoch()) return false;
  if (options_.workers == 0) {
    make_batch(next_batch_++, out);
    return true;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  ready_cv_.wait(lock, [&] { return ready_.count(next_batch_) != 0; });
  *out = std::move(ready_[next_batch_]);
  ready_.erase(next_batch_);
  ++next_batch_;
  lock.unlock();
  space_cv_.notify_all();
  return true;
}

void Loader::make_batch(int64_t b, Batch* out) const {
  const int64_t first = b * options_.batch_size;
  const int64_t size = std::min<int64_t>(options_.batch_size, static_cast<int64_t>(order_.size()) - first);
  const int C = data_.channels, H = data_.height, W = data_.width;
  out->size = size;
  out->images.resize(static_cast<size_t>(size * data_.image_numel()));
  out->labels.resize(static_cast<size_t>(size));
  out->indices.resize(static_cast<size_t>(size));

  float scale[8], shift[8];
  for (int c = 0; c < C; ++c) {
    scale[c] = 1.0f / (255.0f * info_.std[c]);
    shift[c] = -info_.mean[c] / info_.std[c];
  }
  for (int64_t s = 0; s < size; ++s) {
    const int64_t index = order_[first + s];
    out->indices[s] = index;
    out->labels[s] = data_.labelled() ? data_.labels[index] : -1;
    float* dst = out->images.data() + s * data_.image_numel();
    if (!data_.inputs.empty()) {  // already normalised
      std::copy_n(data_.inputs.data() + index * data_.image_numel(), data_.image_numel(), dst);
      continue;
    }
    const uint8_t* src = data_.image(index);
    int dy = 0, dx = 0;
    bool flip = false;
    if (options_.augment) {
      const uint64_t r = mix(options_.seed ^ mix((static_cast<uint64_t>(epoch_) << 32) ^ static_cast<uint64_t>(index)));
      dy = static_cast<int>(r % (2 * kCropPadding + 1)) - kCropPadding;
      dx = static_cast<int>((r >> 8) % (2 * kCropPadding + 1)) - kCropPadding;
      flip = ((r >> 16) & 1) != 0;
    }
    for (int c = 0; c < C; ++c) {
      const uint8_t* plane = src + static_cast<int64_t>(c) * H * W;
      for (int y = 0; y < H; ++y) {
        const int sy = y + dy;
        for (int x = 0; x < W; ++x) {
          const int sx = (flip ? W - 1 - x : x) + dx;
          // Pixels shifted in from outside are black (0) before normalisation, as torchvision pads.
          const uint8_t v = (sy >= 0 && sy < H && sx >= 0 && sx < W) ? plane[sy * W + sx] : 0;
          *dst++ = static_cast<float>(v) * scale[c] + shift[c];
        }
      }
    }
  }
}

}  // namespace octet
