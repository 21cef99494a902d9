// tests/cuda/cuda_on_cpu.h, which runs the cuda-imma kernel's source on the CPU:
// barriers order the threads' shared-memory accesses, cp.async lands by its
// wait in the late mode, and a kernel's errors (a deadlock, lanes at
// different warp instructions, accesses outside the block's shared memory)
// fail the run instead of hanging it or passing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cuda/cuda_on_cpu.h"
#include "tests/support/test_util.h"

namespace octet::cuda_on_cpu {
namespace {

BlockRun block_of(int threads, int shared_bytes, bool late = false) {
  BlockRun run;
  run.threads = threads, run.shared_bytes = shared_bytes;
  run.copies_at_wait = late, run.last_to_first = late;
  return run;
}

TEST(CudaOnCpu, BarriersOrderSharedMemoryAcrossThreads) {
  for (const bool late : {false, true}) {
    std::vector<int> got(64, -1);
    run_block(block_of(64, 256, late), [&] {
      int* slots = reinterpret_cast<int*>(cuda::shared);
      const int t = static_cast<int>(threadIdx.x);
      slots[t] = 10 * t;
      __syncthreads();
      got[t] = slots[63 - t];  // written by another thread, before the barrier
    });
    for (int t = 0; t < 64; ++t) EXPECT_EQ(got[t], 10 * (63 - t)) << "thread " << t << (late ? ", late" : "");
  }
}

TEST(CudaOnCpu, CopiesLandWhenIssuedOrOnlyAtTheirWait) {
  const std::vector<int8_t> global(16, 5);
  for (const bool late : {false, true}) {
    int before = -1, after = -1;
    run_block(block_of(32, 512, late), [&] {
      if (threadIdx.x != 0) return;
      cuda::cp_async_zero_fill<16>(32, global.data(), true);
      cuda::cp_async_commit();
      before = cuda::shared[32];
      cuda::cp_async_wait<0>();
      after = cuda::shared[32];
    });
    EXPECT_EQ(before, late ? 0x77 : 5) << "before the wait, late " << late;
    EXPECT_EQ(after, 5) << "after the wait, late " << late;
  }
}

TEST(CudaOnCpu, WarpInstructionsSeeEveryLane) {
  std::vector<int32_t> d0(32);
  run_block(block_of(32, 1024), [&] {
    const unsigned lane = threadIdx.x;
    for (int i = 0; i < 16; ++i) cuda::shared[16 * lane + i] = static_cast<int8_t>(lane == 0 ? 1 : 0);
    __syncthreads();
    uint32_t a[4];
    cuda::ldmatrix_x4(a, 16 * lane);  // lane l's row: bytes 16l.. (lane 0's are ones)
    const uint32_t b[2] = {0x01010101u, 0x01010101u};
    int32_t d[4] = {0, 0, 0, 0};
    cuda::mma_s8(d, a, b);
    d0[lane] = d[0];
  });
  // Row 0 of A holds lane 0's 16 ones (bytes 0-15 of k) and zeros: 16 per column of B's ones.
  for (int lane = 0; lane < 32; ++lane) EXPECT_EQ(d0[lane], lane < 4 ? 16 : 0) << "lane " << lane;
}

TEST(CudaOnCpu, KernelErrorsFailTheRun) {
  const std::string deadlock = error_of([] {
    run_block(block_of(32, 256), [] {
      if (threadIdx.x == 0) {
        __syncthreads();
      } else {
        uint32_t r[4];
        cuda::ldmatrix_x4(r, 0);
      }
    });
  });
  EXPECT_NE(deadlock.find("deadlock: 1 threads at __syncthreads, 31 at ldmatrix"), std::string::npos) << deadlock;
  const std::string diverged = error_of([] {
    run_block(block_of(32, 256), [] {
      uint32_t r[4];
      if (threadIdx.x == 5) return;
      cuda::ldmatrix_x4(r, 0);
    });
  });
  EXPECT_NE(diverged.find("different warp instructions"), std::string::npos) << diverged;
  const std::string copy =
      error_of([] { run_block(block_of(32, 256), [] { cuda::cp_async_zero_fill<16>(256, nullptr, false); }); });
  EXPECT_NE(copy.find("outside the block's 256"), std::string::npos) << copy;
  const std::string store = error_of([] { run_block(block_of(32, 256), [] { cuda::shared[300] = 1; }); });
  EXPECT_NE(store.find("wrote shared byte 300, past the block's 256"), std::string::npos) << store;
  const std::string row = error_of([] {
    run_block(block_of(32, 256), [] {
      uint32_t r[4];
      cuda::ldmatrix_x4(r, 8);
    });
  });
  EXPECT_NE(row.find("not 16 aligned bytes"), std::string::npos) << row;
}

}  // namespace
}  // namespace octet::cuda_on_cpu
