// A batch too large for the machine is refused before any allocation, naming
// the buffers, their bytes and the largest batch that fits.
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "common/memory_budget.h"

namespace octet {
namespace {

std::string refusal(int64_t batch, double bytes_per_sample, uint64_t available) {
  try {
    check_batch_fits("octet bench infer", batch, bytes_per_sample, "input images", available);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(MemoryBudget, ABatchThatFitsPasses) {
  EXPECT_EQ(refusal(1000, 4096, 4096 * 1000), "");
  EXPECT_EQ(refusal(1, 1e12, 0), "");  // memory unknown: no check
}

TEST(MemoryBudget, ABatchTooLargeNamesItsBytesAndTheBatchThatFits) {
  // 1e9 samples of 3x32x32 float32 (12,288 bytes) against 16 GB.
  const std::string msg = refusal(1000000000, 12288, 16000000000);
  EXPECT_NE(msg.find("a batch of 1000000000 does not fit in memory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("input images need 12.3 TB (12.3 KB per sample)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("16.0 GB are available"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the largest batch that fits is 1302083"), std::string::npos) << msg;
}

TEST(MemoryBudget, NotOneSampleFits) {
  EXPECT_NE(refusal(2, 5000, 4000).find("not even one sample fits"), std::string::npos);
}

TEST(MemoryBudget, TheMachineReportsItsMemory) {
  // Linux's /proc/meminfo: at least a megabyte free on any machine running this.
  EXPECT_GT(available_memory_bytes(), 1u << 20);
}

}  // namespace
}  // namespace octet
