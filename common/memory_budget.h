// A batch's buffers checked against the memory the machine has free before
// they are allocated: a batch too large is refused naming the buffer, its
// bytes and the largest batch that fits, not as std::bad_alloc from deep
// inside an allocation.
#pragma once

#include <cstdint>
#include <string>

namespace octet {

// MemAvailable of /proc/meminfo plus free swap, in bytes; 0 where unknown.
uint64_t available_memory_bytes();

// Throws Error when `batch` samples of `bytes_per_sample` each (plus
// `fixed_bytes`) exceed `available` bytes (0: no check). `buffers` says what
// the bytes are, e.g. "input images (3x32x32 float32) and activations".
void check_batch_fits(const std::string& what, int64_t batch, double bytes_per_sample, const std::string& buffers,
                      uint64_t available = available_memory_bytes());

// "12.3 GB" style, for messages.
std::string byte_count(double bytes);

}  // namespace octet
