// The AVX-512 epilogue's per-channel vectors (epilogue_avx512.h
// ChannelVectors), made once where the epilogue's tables are
// (PaddedEpilogue::add_vnni_vectors), so that no run builds them: they took
// about a tenth of CIFAR MobileNetV2's time at batch 1. Compiled with AVX-512
// flags; it instantiates no template or inline function shared with other files.
#include <cstring>

#include "runtime/cpu/epilogue_avx512.h"

namespace octet::cpu::vnni {

int64_t channel_vectors_bytes(int64_t channels) {
  return (channels + kEpilogueBlock - 1) / kEpilogueBlock * int64_t{sizeof(ChannelVectors)};
}

void write_channel_vectors(const EpilogueTables& e, int64_t channels, int64_t depth, void* dst) {
  static_assert(alignof(ChannelVectors) == 64 && sizeof(ChannelVectors) % 64 == 0,
                "PaddedEpilogue::VectorLine holds ChannelVectors");
  const bool narrow = e.multiplier && narrow_is_exact(depth, channels, e);
  auto* bytes = static_cast<unsigned char*>(dst);
  for (int64_t channel = 0; channel < channels; channel += kEpilogueBlock, bytes += sizeof(ChannelVectors)) {
    const ChannelVectors v(e, channel, narrow);
    std::memcpy(bytes, &v, sizeof v);
  }
}

}  // namespace octet::cpu::vnni
