// How the process's allocator treats freed memory. octet's float and int8
// passes allocate and free the same multi-megabyte activation buffers batch
// after batch; glibc hands blocks that large straight back to the kernel, so
// every batch paid a page fault per 4 KiB page again (on the 2-core build
// machine a third of the calibration pass). Keeping freed blocks for reuse
// removes that; peak memory is unchanged because the freed blocks are the
// ones the next batch asks for.
#pragma once

namespace octet {

// Call once at start-up, before the first large allocation (the CLI's main
// and the Python module's import). A no-op on C libraries other than glibc.
void keep_freed_memory_for_reuse();

}  // namespace octet
