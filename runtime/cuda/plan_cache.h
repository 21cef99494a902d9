// A small least-recently-used cache of owned values, for the CUDA engine's
// per-batch-size plans (each holds device buffers and a CUDA graph, so a
// server seeing many batch sizes must not keep them all). Plain C++, tested
// on the CPU (tests/cuda/test_plan_cache.cpp). Not thread-safe: its owner locks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <list>
#include <memory>
#include <utility>
#include <vector>

namespace octet::cuda {

template <typename Key, typename Value>
class PlanCache {
 public:
  explicit PlanCache(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

  // The value of `key`, now the most recently used, or null.
  Value* find(const Key& key) {
    const auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.first == key; });
    if (it == entries_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, it);
    return it->second.get();
  }

  // The key that inserting a new one would evict, or null when there is room.
  const Key* victim() const { return entries_.size() < capacity_ ? nullptr : &entries_.back().first; }

  // Adds `key` (absent) as the most recently used, evicting the least
  // recently used value when full.
  Value& insert(const Key& key, std::unique_ptr<Value> value) {
    if (entries_.size() >= capacity_) entries_.pop_back();
    entries_.emplace_front(key, std::move(value));
    return *entries_.front().second;
  }

  void clear() { entries_.clear(); }
  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  // Most recently used first.
  std::vector<Key> keys() const {
    std::vector<Key> out;
    for (const Entry& e : entries_) out.push_back(e.first);
    return out;
  }

 private:
  using Entry = std::pair<Key, std::unique_ptr<Value>>;
  size_t capacity_;
  std::list<Entry> entries_;
};

}  // namespace octet::cuda
