// How OpenMP's idle threads wait for the next parallel region, which sets
// how much work is worth sharing with them.
#pragma once

#include <cstdint>

namespace octet::cpu {

// Whether idle threads spin (libgomp's and libomp's default for a while
// after each parallel region, and OMP_WAIT_POLICY=active), so that the next
// region of a network's forward pass starts on them within microseconds,
// rather than sleep (OMP_WAIT_POLICY=passive), which a thread takes tens of
// microseconds to leave (50-150 on the 2-core build VMs): whether
// OMP_WAIT_POLICY, read once, is not passive.
bool idle_threads_spin();
// The same for a value of OMP_WAIT_POLICY (null: unset); case does not
// matter, as for libgomp.
bool idle_threads_spin(const char* wait_policy);

// The least work (multiply-adds, or the values a kernel makes) that a kernel
// shares between threads: `spinning` where idle threads spin, `sleeping`
// where they sleep. (Not inline: the kernels built with AVX2 or AVX-512
// flags call it, and must not emit a copy that a baseline caller could link.)
// Below it the hot kernels open no OpenMP region at all, rather than one with
// `if (false)`: libgomp ends every region, even a one-thread one, with a
// futex wake (a system call; 5% of CIFAR MobileNetV2's time at batch 1).
// Inside a parallel region (a thread's share of a batch): none is worth it.
int64_t min_parallel_work(int64_t spinning, int64_t sleeping);

}  // namespace octet::cpu
