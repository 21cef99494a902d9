// Choosing the CPU runtime's kernel path. (Both paths are compared with the
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
  EXPECT_EQ(cpu::kernel_path(), cpu::kernel_path_supported(KernelPath::Avx512Vnni) ? KernelPath::Avx512Vnni
                                                                                   : KernelPath::Reference);
  EXPECT_TRUE(cpu::kernel_path_supported(KernelPath::Reference));
}

TEST(KernelPath, NamesRoundTripAndUnknownNamesFail) {
  EXPECT_EQ(cpu::kernel_path_from_name("reference"), KernelPath::Reference);
  EXPECT_STREQ(cpu::kernel_path_name(KernelPath::Avx512Vnni), "avx512-vnni");
  if (cpu::kernel_path_supported(KernelPath::Avx512Vnni)) {
    EXPECT_EQ(cpu::kernel_path_from_name("avx512-vnni"), KernelPath::Avx512Vnni);
  } else {
    EXPECT_THROW(cpu::kernel_path_from_name("avx512-vnni"), Error);
  }
  try {
    cpu::kernel_path_from_name("avx2");
    FAIL() << "an unknown path name was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'avx2' is not a CPU kernel path"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace octet
