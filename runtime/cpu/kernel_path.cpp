// Which implementation of the conv kernels runs: the fastest this CPU
// supports, unless OCTET_CPU_KERNELS or set_kernel_path asks otherwise.
#include <atomic>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "runtime/cpu/kernels.h"

namespace octet::cpu {

namespace {
bool cpu_has_avx2() {
#if defined(OCTET_CPU_AVX2)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
#else
  return false;  // not an x86-64 build: conv_avx2.cpp is not compiled
#endif
}

bool cpu_has_avx512_vnni() {
#if defined(OCTET_CPU_VNNI)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("bmi2");
#else
  return false;  // not an x86-64 build: conv_vnni.cpp is not compiled
#endif
}

}  // namespace

bool cpu_has_avx512_vbmi() {
#if defined(OCTET_CPU_VNNI)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vbmi");
#else
  return false;  // not an x86-64 build: lookup_vbmi.cpp is not compiled
#endif
}

namespace {

KernelPath path_from_environment() {
  const char* name = std::getenv("OCTET_CPU_KERNELS");
  if (!name || !*name) {
    for (KernelPath path : {KernelPath::Avx512Vnni, KernelPath::Avx2})
      if (kernel_path_supported(path)) return path;
    return KernelPath::Reference;
  }
  try {
    return kernel_path_from_name(name);
  } catch (const Error& e) {
    fail(std::string("environment variable OCTET_CPU_KERNELS: ") + e.what());
  }
}

std::atomic<KernelPath>& selected_path() {
  static std::atomic<KernelPath> path(path_from_environment());
  return path;
}

}  // namespace

const char* kernel_path_name(KernelPath path) {
  switch (path) {
    case KernelPath::Reference:
      return "reference";
    case KernelPath::Avx2:
      return "avx2";
    case KernelPath::Avx512Vnni:
      return "avx512-vnni";
  }
  fail("unknown CPU kernel path");
}

bool kernel_path_supported(KernelPath path) {
  static const bool avx2 = cpu_has_avx2(), vnni = cpu_has_avx512_vnni();
  return path == KernelPath::Reference || (path == KernelPath::Avx2 && avx2) ||
         (path == KernelPath::Avx512Vnni && vnni);
}

KernelPath kernel_path_from_name(const std::string& name) {
  for (KernelPath path : {KernelPath::Reference, KernelPath::Avx2, KernelPath::Avx512Vnni})
    if (name == kernel_path_name(path)) {
      check(kernel_path_supported(path), "this CPU does not support the " + name + " kernels");
      return path;
    }
  fail("'" + name + "' is not a CPU kernel path (known: reference, avx2, avx512-vnni)");
}

KernelPath kernel_path() { return selected_path().load(); }

void set_kernel_path(KernelPath path) {
  check(kernel_path_supported(path),
        std::string("this CPU does not support the ") + kernel_path_name(path) + " kernels");
  selected_path().store(path);
}

}  // namespace octet::cpu
