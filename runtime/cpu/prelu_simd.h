// The AVX-512 form of PRelu's lookups (prelu_vnni.cpp). That file is compiled
// with AVX-512 flags, so call it only where kernel_path_supported says the CPU
// has them (ops/prelu.cpp dispatches).
#pragma once

#include <cstdint>

namespace octet::cpu {

// Bytes a gather may read past the last table: it loads 4 bytes at each index.
constexpr int64_t kChannelTableSlack = 3;

namespace vnni {
// y = tables[c * 256 + x + 128] for each of `pixels` NHWC pixels of `channels`
// int8 values x, c its channel; `tables` holds kChannelTableSlack bytes more.
void channel_lookup(const int8_t* x, int64_t pixels, int64_t channels, const int8_t* tables, int8_t* y);
}

}  // namespace octet::cpu
