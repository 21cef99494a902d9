#include "common/memory_policy.h"

#include <cstdlib>  // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace octet {

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  // Blocks up to 1 GiB come from the heap rather than their own mmap, and up
  // to 1 GiB of free memory at the heap's top stays mapped.
  constexpr int kLimit = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kLimit);
  mallopt(M_TRIM_THRESHOLD, kLimit);
#endif
}

}  // namespace octet
