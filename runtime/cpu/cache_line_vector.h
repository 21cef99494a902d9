// Containers that start on a 64-byte cache line. The SIMD
// kernels read packed weights 32 or 64 bytes at a time; malloc aligns to 16
// bytes, so three buffers in four started off a line and then every such load
// straddled two: a layer whose weights landed so ran 20% slower than its twin
// whose weights did not (ResNet-50's layer3.2 against layer3.1 conv2,
// AVX-512, one thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace octet::cpu {

constexpr std::size_t kCacheLine = 64;

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT: rebinding, as the standard allocators do
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kCacheLine}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{kCacheLine}); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U>&) const {
    return false;
  }
};

template <typename T>
using CacheLineVector = std::vector<T, CacheLineAllocator<T>>;

// Bytes on a cache line, left uninitialised: for buffers every writer fills
// whole (the CPU engine's values), which a vector would zero first.
struct CacheLineDelete {
  void operator()(int8_t* p) const { CacheLineAllocator<int8_t>().deallocate(p, 0); }
};
using CacheLineBytes = std::unique_ptr<int8_t[], CacheLineDelete>;
inline CacheLineBytes cache_line_bytes(std::size_t n) {
  return CacheLineBytes(CacheLineAllocator<int8_t>().allocate(n));
}

}  // namespace octet::cpu
