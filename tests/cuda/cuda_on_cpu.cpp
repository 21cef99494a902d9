#include "tests/cuda/cuda_on_cpu.h"

#include <ucontext.h>

#include <array>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "tests/cuda/ptx_isa.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

namespace octet::cuda {

alignas(128) int8_t shared[cuda_on_cpu::kMaxSharedBytes];

}  // namespace octet::cuda

namespace octet::cuda_on_cpu {

namespace {

constexpr int kWarpSize = 32, kWarpgroupSize = 128;
// A thread's stack: the kernels' deepest use was 8.7 KiB (ASan build, test_cuda_host). Small,
// because ASan's swapcontext clears the shadow of the whole stack at every switch into it.
constexpr size_t kStackBytes = size_t{64} << 10;
constexpr size_t kStackGuardBytes = 1024;          // its lowest bytes, checked after each block
constexpr unsigned char kStackGuard = 0xCD;
constexpr int8_t kUnwritten = 0x77;  // shared memory's bytes before the kernel writes them

// What a thread waits for.
enum class Wait { Nothing, Barrier, Ldmatrix, Mma, MmaUnsignedA, Shuffle, Returned, Wgmma, WgmmaCommit, WgmmaWait };

struct Copy {
  uint32_t to;  // bytes into the dynamic shared memory
  const void* from;
  int bytes;
  bool valid;
  int thread;  // that issued it
};

// A warpgroup's wgmma: each thread's registers and the operands.
struct Wgmma {
  std::array<int32_t*, kWarpgroupSize> d{};
  int n = 0;
  uint64_t a = 0, b = 0;
  bool a_unsigned = false;
};
struct Warpgroup {
  std::vector<Wgmma> open;                 // issued since the last commit
  std::deque<std::vector<Wgmma>> pending;  // committed, not yet multiplied (wgmma_at_wait)
};

struct Thread {
  ucontext_t context{};
  char* stack = nullptr;  // from thread_stack
  Dim3 index;
  bool started = false;
  Wait wait = Wait::Nothing;
  // A warp instruction's operands (address: ldmatrix's row or the shuffle's
  // lane mask; a, b, d) and results (d; a shuffle's in d[0]).
  int address = 0;
  ptx::Registers4 a{}, d{};
  ptx::Registers2 b{};
  std::vector<Copy> open;                 // cp.async copies since the last commit
  std::vector<std::vector<Copy>> groups;  // committed, not yet landed (copies_at_wait)
  Wgmma wgmma;                            // the operands of a wgmma (the thread's d[0])
  uint64_t fenced_at = 0;                 // the block's clock at its last fence.proxy.async
  bool grid_waited = false;               // past griddepcontrol.wait
  bool vote = false;                      // its predicate at a __syncthreads_or; then the block's answer
};

struct Block {
  BlockRun run;
  const std::function<void()>* kernel = nullptr;
  std::vector<Thread> threads;
  int current = -1;
  ucontext_t scheduler{};
  std::string error;      // the first error, thrown by run_block
  bool aborting = false;  // after an error: every thread unwinds when resumed
  std::vector<Warpgroup> warpgroups;
  // Each shared byte's last cp.async: the thread that issued it (-1: none)
  // and the clock when it landed, which ticks at each landing and fence.
  std::vector<int> writer;
  std::vector<uint64_t> written_at;
  uint64_t clock = 0;
#if defined(__SANITIZE_ADDRESS__)
  const void* scheduler_stack = nullptr;
  size_t scheduler_stack_bytes = 0;
#endif
};

Block* running = nullptr;

Block& block() {
  if (running == nullptr) fail("cuda_on_cpu: a kernel primitive called outside run_block");
  return *running;
}
Thread& self() { return block().threads[static_cast<size_t>(block().current)]; }

std::string where(const Block& b) {
  return "block (" + std::to_string(b.run.block.x) + ", " + std::to_string(b.run.block.y) + ")";
}

// Thrown in a thread that the failed run resumes, to unwind its stack.
struct Abort {};

// Hands the CPU from the running thread back to the scheduler, until it runs the thread again.
void yield() {
  Block& b = block();
  Thread& t = self();
#if defined(__SANITIZE_ADDRESS__)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, b.scheduler_stack, b.scheduler_stack_bytes);
#endif
  swapcontext(&t.context, &b.scheduler);
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  if (b.aborting) throw Abort{};
}

void thread_entry() {
  Block& b = block();
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(nullptr, &b.scheduler_stack, &b.scheduler_stack_bytes);
#endif
  try {
    (*b.kernel)();
  } catch (const Abort&) {
  } catch (const std::exception& e) {
    if (b.error.empty()) b.error = where(b) + ", thread " + std::to_string(self().index.x) + ": " + e.what();
  }
  self().wait = Wait::Returned;
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_start_switch_fiber(nullptr, b.scheduler_stack, b.scheduler_stack_bytes);  // this fiber ends
#endif
}  // the context's uc_link resumes the scheduler

void land(const Copy& c) {
  int8_t* to = cuda::shared + c.to;
  if (c.valid)
    std::memcpy(to, c.from, static_cast<size_t>(c.bytes));
  else
    std::memset(to, 0, static_cast<size_t>(c.bytes));
  Block& b = block();
  ++b.clock;
  for (uint32_t i = c.to; i < c.to + uint32_t(c.bytes); ++i) b.writer[i] = c.thread, b.written_at[i] = b.clock;
}

// Multiplies a wgmma, once every byte it reads was fenced by its writer.
void multiply(Block& b, const Wgmma& w) {
  const auto fenced = [&](uint64_t descriptor, int rows) {
    for (int row = 0; row < rows; ++row)
      for (int k = 0; k < 32; ++k) {
        const int at = ptx::wgmma_operand_address(descriptor, row, k) - int(b.run.shared_start);
        if (at < 0 || at >= b.run.shared_bytes) continue;  // ptx::wgmma_m64nNk32 names it
        const int writer = b.writer[size_t(at)];
        if (writer >= 0 && b.written_at[size_t(at)] > b.threads[size_t(writer)].fenced_at)
          fail(where(b) + ": a wgmma reads shared byte " + std::to_string(at) + ", which thread " +
               std::to_string(writer) + " wrote by cp.async with no fence.proxy.async after it");
      }
  };
  fenced(w.a, 64);
  fenced(w.b, w.n);
  ptx::wgmma_m64nNk32(cuda::shared, static_cast<size_t>(b.run.shared_bytes), b.run.shared_start, w.a, w.b, w.n,
                      w.a_unsigned, w.d);
}

bool warpgroup_instruction(Wait op) { return op == Wait::Wgmma || op == Wait::WgmmaCommit || op == Wait::WgmmaWait; }

// Runs warpgroup g's wgmma, commit or wait once all its threads are at the same one.
void complete_warpgroup(Block& b, int g) {
  if (b.run.threads % kWarpgroupSize != 0)
    fail(where(b) + ": a warpgroup instruction in a block of " + std::to_string(b.run.threads) +
         " threads, not whole warpgroups");
  Thread* threads = &b.threads[size_t(g * kWarpgroupSize)];
  const Wait op = threads[0].wait;
  for (int t = 0; t < kWarpgroupSize; ++t) {
    if (!warpgroup_instruction(threads[t].wait)) return;  // not all there yet
    if (threads[t].wait != op || threads[t].address != threads[0].address)
      fail(where(b) + ", warpgroup " + std::to_string(g) + ": threads 0 and " + std::to_string(t) +
           " are at different warpgroup instructions");
  }
  Warpgroup& group = b.warpgroups[size_t(g)];
  if (op == Wait::Wgmma) {
    Wgmma w = threads[0].wgmma;
    for (int t = 0; t < kWarpgroupSize; ++t) {
      const Wgmma& mine = threads[t].wgmma;
      if (mine.n != w.n || mine.a != w.a || mine.b != w.b || mine.a_unsigned != w.a_unsigned)
        fail(where(b) + ", warpgroup " + std::to_string(g) + ": threads 0 and " + std::to_string(t) +
             " give a wgmma different shapes or descriptors");
      w.d[size_t(t)] = mine.d[0];
    }
    if (b.run.wgmma_at_wait)
      group.open.push_back(w);
    else
      multiply(b, w);
  } else if (op == Wait::WgmmaCommit) {
    group.pending.push_back(std::move(group.open));
    group.open.clear();
  } else {
    while (group.pending.size() > size_t(threads[0].address)) {
      for (const Wgmma& w : group.pending.front()) multiply(b, w);
      group.pending.pop_front();
    }
  }
  for (int t = 0; t < kWarpgroupSize; ++t) threads[t].wait = Wait::Nothing;
}

// Runs warp w's instruction once all its lanes wait at the same one.
void complete_warp(Block& b, int w) {
  Thread* lanes = &b.threads[static_cast<size_t>(w * kWarpSize)];
  const Wait op = lanes[0].wait;
  for (int l = 0; l < kWarpSize; ++l) {
    if (lanes[l].wait == Wait::Nothing || lanes[l].wait == Wait::Barrier) return;  // not all there yet
    if (lanes[l].wait != op)
      fail(where(b) + ", warp " + std::to_string(w) + ": lanes 0 and " + std::to_string(l) +
           " are at different warp instructions (or one has returned)");
  }
  if (op == Wait::Ldmatrix) {
    std::array<int, kWarpSize> address;
    for (int l = 0; l < kWarpSize; ++l) address[l] = lanes[l].address - int(b.run.shared_start);
    const std::array<ptx::Registers4, kWarpSize> r =
        ptx::ldmatrix_x4(cuda::shared, static_cast<size_t>(b.run.shared_bytes), address);
    for (int l = 0; l < kWarpSize; ++l) lanes[l].d = r[l];
  } else if (op == Wait::Shuffle) {
    std::array<uint32_t, kWarpSize> value;
    for (int l = 0; l < kWarpSize; ++l) value[l] = lanes[l].a[0];
    for (int l = 0; l < kWarpSize; ++l) lanes[l].d[0] = value[(l ^ lanes[l].address) % kWarpSize];
  } else if (op == Wait::Mma || op == Wait::MmaUnsignedA) {
    std::array<ptx::Registers4, kWarpSize> a, d;
    std::array<ptx::Registers2, kWarpSize> bs;
    for (int l = 0; l < kWarpSize; ++l) a[l] = lanes[l].a, bs[l] = lanes[l].b, d[l] = lanes[l].d;
    op == Wait::Mma ? ptx::mma_m16n8k32_s8(d, a, bs) : ptx::mma_m16n8k32_u8s8(d, a, bs);
    for (int l = 0; l < kWarpSize; ++l) lanes[l].d = d[l];
  } else {
    return;  // every lane returned
  }
  for (int l = 0; l < kWarpSize; ++l) lanes[l].wait = Wait::Nothing;
}

// Wakes the threads at the barrier once every thread that has not returned is there.
bool release_barrier(Block& b) {
  int waiting = 0, other = 0;
  for (const Thread& t : b.threads)
    if (t.wait == Wait::Barrier)
      ++waiting;
    else if (t.wait != Wait::Returned)
      ++other;
  if (waiting == 0 || other > 0) return false;
  bool any = false;
  for (const Thread& t : b.threads) any = any || (t.wait == Wait::Barrier && t.vote);
  for (Thread& t : b.threads)
    if (t.wait == Wait::Barrier) t.wait = Wait::Nothing, t.vote = any;
  return true;
}

std::string deadlock(const Block& b) {
  int at[10] = {};
  for (const Thread& t : b.threads) ++at[static_cast<int>(t.wait)];
  return where(b) + ": deadlock: " + std::to_string(at[int(Wait::Barrier)]) + " threads at __syncthreads, " +
         std::to_string(at[int(Wait::Ldmatrix)]) + " at ldmatrix, " +
         std::to_string(at[int(Wait::Mma)] + at[int(Wait::MmaUnsignedA)]) + " at mma, " +
         std::to_string(at[int(Wait::Shuffle)]) + " at shuffles, " +
         std::to_string(at[int(Wait::Wgmma)] + at[int(Wait::WgmmaCommit)] + at[int(Wait::WgmmaWait)]) +
         " at wgmma instructions, " + std::to_string(at[int(Wait::Returned)]) + " returned";
}

// A warp instruction of the running thread: its lanes' operands are complete
// once the last of them arrives (complete_warp, from the scheduler).
void warp_instruction(Wait op) {
  self().wait = op;
  yield();
}

// Thread i's stack, kept from block to block: a fresh zeroed one per thread and block was
// most of a test's time (page faults).
char* thread_stack(int i) {
  static std::vector<std::unique_ptr<char[]>> stacks;
  while (stacks.size() <= static_cast<size_t>(i)) {
    stacks.emplace_back(new char[kStackBytes]);
    std::memset(stacks.back().get(), kStackGuard, kStackGuardBytes);
  }
  return stacks[static_cast<size_t>(i)].get();  // ASan's swapcontext clears its shadow
}

bool stack_overflowed(const Thread& t) {
  for (size_t i = 0; i < kStackGuardBytes; ++i)
    if (static_cast<unsigned char>(t.stack[i]) != kStackGuard) return true;
  return false;
}

// Makes thread i's context, to start in thread_entry. (Not inlined: no local
// of run_block lives across getcontext, which may return twice.)
[[gnu::noinline]] void prepare(Block& b, int i) {
  Thread& t = b.threads[static_cast<size_t>(i)];
  t.index.x = static_cast<unsigned>(i);
  t.stack = thread_stack(i);
  getcontext(&t.context);
  t.context.uc_stack.ss_sp = t.stack;
  t.context.uc_stack.ss_size = kStackBytes;
  t.context.uc_link = &b.scheduler;
  makecontext(&t.context, thread_entry, 0);
}

// Runs thread t until it yields or returns; after an error, until it has
// unwound. (Not inlined: no local of run_block lives across swapcontext.)
[[gnu::noinline]] void resume(Block& b, Thread& t) {
  t.started = true;
#if defined(__SANITIZE_ADDRESS__)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, t.stack, kStackBytes);
#endif
  swapcontext(&b.scheduler, &t.context);
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
}

}  // namespace

void run_block(const BlockRun& run, const std::function<void()>& kernel) {
  check(running == nullptr, "cuda_on_cpu::run_block: a block is already running");
  check(run.threads > 0 && run.threads % kWarpSize == 0,
        "cuda_on_cpu::run_block: " + std::to_string(run.threads) + " threads are not whole warps");
  check(run.shared_bytes >= 0 && run.shared_bytes <= kMaxSharedBytes,
        "cuda_on_cpu::run_block: " + std::to_string(run.shared_bytes) + " bytes of shared memory");
  check(run.shared_start % 16 == 0, "cuda_on_cpu::run_block: shared memory starting at an address not 16-aligned");
  std::memset(cuda::shared, kUnwritten, sizeof cuda::shared);

  Block b;
  b.run = run;
  b.kernel = &kernel;
  b.threads.resize(static_cast<size_t>(run.threads));
  b.warpgroups.resize(static_cast<size_t>(run.threads / kWarpgroupSize));
  b.writer.assign(static_cast<size_t>(run.shared_bytes), -1);
  b.written_at.assign(static_cast<size_t>(run.shared_bytes), 0);
  for (int i = 0; i < run.threads; ++i) prepare(b, i);
  running = &b;
  for (;;) {
    bool ran = false, live = false;
    for (int k = 0; k < run.threads; ++k) {
      const int i = run.last_to_first ? run.threads - 1 - k : k;
      Thread& t = b.threads[static_cast<size_t>(i)];
      if (t.wait != Wait::Returned) live = true;
      if (t.wait != Wait::Nothing) continue;
      b.current = i;
      resume(b, t);
      ran = true;
      if (b.error.empty() && (t.wait == Wait::Ldmatrix || t.wait == Wait::Mma || t.wait == Wait::MmaUnsignedA ||
                               t.wait == Wait::Shuffle || warpgroup_instruction(t.wait))) {
        try {
          warpgroup_instruction(t.wait) ? complete_warpgroup(b, i / kWarpgroupSize) : complete_warp(b, i / kWarpSize);
        } catch (const Error& e) {
          b.error = e.what();
        }
      }
      if (!b.error.empty()) break;
    }
    if (!b.error.empty() || !live) break;
    if (!ran && !release_barrier(b)) {
      b.error = deadlock(b);
      break;
    }
  }
  b.aborting = !b.error.empty();
  for (int i = 0; i < run.threads && b.aborting; ++i) {
    Thread& t = b.threads[static_cast<size_t>(i)];
    b.current = i;
    if (t.started && t.wait != Wait::Returned) resume(b, t);
  }
  running = nullptr;
  for (int i = 0; i < run.threads; ++i)
    if (stack_overflowed(b.threads[static_cast<size_t>(i)]))
      fail("cuda_on_cpu: thread " + std::to_string(i) + " of " + where(b) + " overflowed its " +
           std::to_string(kStackBytes) + "-byte stack (kStackBytes)");
  for (size_t g = 0; g < b.warpgroups.size() && b.error.empty(); ++g)
    if (!b.warpgroups[g].open.empty() || !b.warpgroups[g].pending.empty())
      b.error = where(b) + ", warpgroup " + std::to_string(g) + ": returned with wgmmas never waited for";
  if (b.error.empty())
    for (int i = run.shared_bytes; i < kMaxSharedBytes; ++i)
      if (cuda::shared[i] != kUnwritten) {
        b.error = where(b) + ": wrote shared byte " + std::to_string(i) + ", past the block's " +
                  std::to_string(run.shared_bytes);
        break;
      }
  check(b.error.empty(), "cuda_on_cpu: " + b.error);
}

Dim3 thread_index() { return self().index; }
Dim3 block_index() { return block().run.block; }

void syncthreads() { syncthreads_or(false); }

bool syncthreads_or(bool predicate) {
  self().vote = predicate;
  self().wait = Wait::Barrier;
  yield();
  return self().vote;
}

uint32_t shared_offset(const void* p) {
  const auto* at = static_cast<const int8_t*>(p);
  if (at < cuda::shared || at > cuda::shared + kMaxSharedBytes)
    fail("shared_address of a pointer outside shared memory");
  return block().run.shared_start + static_cast<uint32_t>(at - cuda::shared);
}

void cp_async(uint32_t address, const void* global, int bytes, bool valid) {
  Block& b = block();
  const uint32_t to = address - b.run.shared_start;
  if (address < b.run.shared_start || to % static_cast<uint32_t>(bytes) != 0 ||
      to + static_cast<uint32_t>(bytes) > uint32_t(b.run.shared_bytes))
    fail("cp.async of " + std::to_string(bytes) + " bytes to shared byte " + std::to_string(int64_t(address) -
         b.run.shared_start) + ": not aligned, or outside the block's " + std::to_string(b.run.shared_bytes));
  const auto* from = static_cast<const int8_t*>(global);
  const auto* unwritten = static_cast<const int8_t*>(b.run.unwritten);
  const bool never_written = from >= unwritten && from + bytes <= unwritten + b.run.unwritten_bytes;
  if (b.run.programmatic && valid && !self().grid_waited && !never_written)
    fail("a cp.async of global bytes before griddepcontrol.wait in a programmatic launch (the kernel before may "
         "still be writing them)");
  const Copy c{to, global, bytes, valid, b.current};
  if (b.run.copies_at_wait)
    self().open.push_back(c);
  else
    land(c);
}

void cp_async_commit() {
  Thread& t = self();
  t.groups.push_back(std::move(t.open));
  t.open.clear();
}

void cp_async_wait(int pending) {
  Thread& t = self();
  while (t.groups.size() > static_cast<size_t>(pending)) {
    for (const Copy& c : t.groups.front()) land(c);
    t.groups.erase(t.groups.begin());
  }
}

void ldmatrix_x4(uint32_t (&r)[4], uint32_t at) {
  Thread& t = self();
  t.address = static_cast<int>(at);
  warp_instruction(Wait::Ldmatrix);
  for (int j = 0; j < 4; ++j) r[j] = t.d[j];
}

namespace {
void mma(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], Wait instruction) {
  Thread& t = self();
  for (int j = 0; j < 4; ++j) t.a[j] = a[j], t.d[j] = static_cast<uint32_t>(d[j]);
  t.b = {b[0], b[1]};
  warp_instruction(instruction);
  for (int j = 0; j < 4; ++j) d[j] = static_cast<int32_t>(t.d[j]);
}
}  // namespace

void mma_s8(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) { mma(d, a, b, Wait::Mma); }
void mma_u8s8(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) { mma(d, a, b, Wait::MmaUnsignedA); }

int32_t shfl_xor(int32_t value, int lane_mask) {
  Thread& t = self();
  t.a[0] = static_cast<uint32_t>(value);
  t.address = lane_mask;
  warp_instruction(Wait::Shuffle);
  return static_cast<int32_t>(t.d[0]);
}

void fence_proxy_async() { self().fenced_at = ++block().clock; }
void grid_dependency_wait() { self().grid_waited = true; }

void wgmma(int32_t* d, int n, uint64_t a, uint64_t b, bool a_unsigned) {
  Thread& t = self();
  t.wgmma.d[0] = d, t.wgmma.n = n, t.wgmma.a = a, t.wgmma.b = b, t.wgmma.a_unsigned = a_unsigned;
  t.address = 0;
  warp_instruction(Wait::Wgmma);
}

void wgmma_commit() {
  self().address = 0;
  warp_instruction(Wait::WgmmaCommit);
}

void wgmma_wait(int pending) {
  self().address = pending;
  warp_instruction(Wait::WgmmaWait);
}

}  // namespace octet::cuda_on_cpu
