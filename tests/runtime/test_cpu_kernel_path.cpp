// Choosing the CPU runtime's kernel path. (Every path is compared with the
// reference for every operator and whole networks by test_backend_ops.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "common/error.h"
#include "runtime/cpu/kernels.h"

namespace octet {
namespace {

using cpu::KernelPath;

TEST(KernelPath, FastestSupportedPathIsTheDefault) {
  if (const char* forced = std::getenv("OCTET_CPU_KERNELS"); forced && *forced)
    GTEST_SKIP() << "OCTET_CPU_KERNELS=" << forced << " chooses the path";
  const KernelPath fastest = cpu::kernel_path_supported(KernelPath::Avx512Vnni) ? KernelPath::Avx512Vnni
                             : cpu::kernel_path_supported(KernelPath::Avx2)     ? KernelPath::Avx2
                                                                                : KernelPath::Reference;
  EXPECT_EQ(cpu::kernel_path(), fastest);
  EXPECT_TRUE(cpu::kernel_path_supported(KernelPath::Reference));
#if defined(__x86_64__)
  // octet's x86-64 baseline is x86-64-v3: an x86-64 CPU that runs it has AVX2.
  EXPECT_TRUE(cpu::kernel_path_supported(KernelPath::Avx2));
#endif
}

TEST(KernelPath, NamesRoundTripAndUnknownNamesFail) {
  EXPECT_EQ(cpu::kernel_path_from_name("reference"), KernelPath::Reference);
  EXPECT_STREQ(cpu::kernel_path_name(KernelPath::Avx2), "avx2");
  EXPECT_STREQ(cpu::kernel_path_name(KernelPath::Avx512Vnni), "avx512-vnni");
  for (KernelPath path : {KernelPath::Avx2, KernelPath::Avx512Vnni}) {
    const std::string name = cpu::kernel_path_name(path);
    if (cpu::kernel_path_supported(path)) {
      EXPECT_EQ(cpu::kernel_path_from_name(name), path);
    } else {
      EXPECT_THROW(cpu::kernel_path_from_name(name), Error);
    }
  }
  try {
    cpu::kernel_path_from_name("amx");
    FAIL() << "an unknown path name was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'amx' is not a CPU kernel path (known: reference, avx2, avx512-vnni)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace octet
