// Dataset readers on small files written by the test, and the loader's
// guarantee that every sample comes exactly once per epoch for any worker count.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "common/error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> cifar_records(int count, uint8_t bad_label_at = 255) {
  std::vector<uint8_t> bytes;
  for (int r = 0; r < count; ++r) {
    bytes.push_back(r == bad_label_at ? 10 : static_cast<uint8_t>(r % 10));
    for (int p = 0; p < 3072; ++p) bytes.push_back(static_cast<uint8_t>((r * 7 + p) & 0xff));
  }
  return bytes;
}

TEST(Cifar10Reader, ReadsRecordsInOrder) {
  TempDir dir;
  write_bytes(dir.path("test_batch.bin"), cifar_records(7));
  Dataset d = load_dataset("cifar10", dir.path(), Split::Test);
  ASSERT_EQ(d.size(), 7);  // fewer than 10,000 records is valid
  EXPECT_EQ(d.labels[3], 3);
  EXPECT_EQ(d.image(2)[0], static_cast<uint8_t>(14));
  EXPECT_EQ(d.image(2)[3071], static_cast<uint8_t>((14 + 3071) & 0xff));
}

// Calibration reads only the images it uses: the records picked across the five
// training files are those a full load holds at the same indices.
TEST(Cifar10Reader, ReadsOnlyThePickedRecordsAcrossFiles) {
  TempDir dir;
  for (int i = 1; i <= 5; ++i) write_bytes(dir.path("data_batch_" + std::to_string(i) + ".bin"), cifar_records(3 + i));
  const Dataset all = load_dataset("cifar10", dir.path(), Split::Train);
  ASSERT_EQ(all.size(), 4 + 5 + 6 + 7 + 8);
  const std::vector<int64_t> indices = {0, 3, 4, 9, 17, 29};
  int64_t seen_size = 0;
  const Dataset picked = load_dataset_images("cifar10", dir.path(), Split::Train, [&](int64_t size) {
    seen_size = size;
    return indices;
  });
  EXPECT_EQ(seen_size, all.size());
  ASSERT_EQ(picked.size(), static_cast<int64_t>(indices.size()));
  for (size_t k = 0; k < indices.size(); ++k) {
    EXPECT_EQ(picked.labels[k], all.labels[indices[k]]) << "index " << indices[k];
    EXPECT_TRUE(std::equal(picked.image(k), picked.image(k) + 3072, all.image(indices[k]))) << "index " << indices[k];
  }
  EXPECT_NE(error_of([&] {
              load_dataset_images("cifar10", dir.path(), Split::Train, [](int64_t size) {
                return std::vector<int64_t>{size};
              });
            }).find("out of range"),
            std::string::npos);
}

TEST(Cifar10Reader, RefusesTruncatedFile) {
  TempDir dir;
  auto bytes = cifar_records(3);
  bytes.resize(bytes.size() - 100);
  write_bytes(dir.path("test_batch.bin"), bytes);
  const std::string msg = error_of([&] { load_dataset("cifar10", dir.path(), Split::Test); });
  EXPECT_NE(msg.find("test_batch.bin"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a multiple of the 3073-byte"), std::string::npos) << msg;
}

TEST(Cifar10Reader, RefusesBadLabel) {
  TempDir dir;
  write_bytes(dir.path("test_batch.bin"), cifar_records(5, 4));
  const std::string msg = error_of([&] { load_dataset("cifar10", dir.path(), Split::Test); });
  EXPECT_NE(msg.find("record 4 has label 10"), std::string::npos) << msg;
}

TEST(Cifar10Reader, NamesMissingTrainingFile) {
  TempDir dir;
  for (int i = 1; i <= 4; ++i) write_bytes(dir.path("data_batch_" + std::to_string(i) + ".bin"), cifar_records(2));
  const std::string msg = error_of([&] { load_dataset("cifar10", dir.path(), Split::Train); });
  EXPECT_NE(msg.find("data_batch_5.bin"), std::string::npos) << msg;
}

TEST(Cifar10Reader, RefusesEmptyFile) {
  TempDir dir;
  write_bytes(dir.path("test_batch.bin"), {});
  EXPECT_NE(error_of([&] { load_dataset("cifar10", dir.path(), Split::Test); }).find("empty"), std::string::npos);
}

std::vector<uint8_t> idx_file(uint8_t ndims, std::vector<int> dims, int fill_bytes) {
  std::vector<uint8_t> bytes = {0, 0, 0x08, ndims};
  for (int d : dims)
    for (int s = 24; s >= 0; s -= 8) bytes.push_back(static_cast<uint8_t>((d >> s) & 0xff));
  for (int i = 0; i < fill_bytes; ++i) bytes.push_back(static_cast<uint8_t>(i % 10));
  return bytes;
}

void write_gzip(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

TEST(IdxReader, ReadsPlainAndGzip) {
  TempDir dir;
  write_bytes(dir.path("t10k-images-idx3-ubyte"), idx_file(3, {4, 28, 28}, 4 * 784));
  write_gzip(dir.path("t10k-labels-idx1-ubyte.gz"), idx_file(1, {4}, 4));
  Dataset d = load_dataset("fashion-mnist", dir.path(), Split::Test);
  ASSERT_EQ(d.size(), 4);
  EXPECT_EQ(d.labels[3], 3);
  EXPECT_EQ(d.image(1)[5], static_cast<uint8_t>((784 + 5) % 10));
}

TEST(IdxReader, RefusesTruncatedData) {
  TempDir dir;
  write_bytes(dir.path("t10k-images-idx3-ubyte"), idx_file(3, {4, 28, 28}, 4 * 784 - 1));
  write_bytes(dir.path("t10k-labels-idx1-ubyte"), idx_file(1, {4}, 4));
  const std::string msg = error_of([&] { load_dataset("fashion-mnist", dir.path(), Split::Test); });
  EXPECT_NE(msg.find("t10k-images-idx3-ubyte"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST(IdxReader, RefusesTruncatedGzip) {
  TempDir dir;
  write_gzip(dir.path("full.gz"), idx_file(1, {5000}, 5000));
  auto gz = read_bytes(dir.path("full.gz"));
  gz.resize(gz.size() / 2);
  write_bytes(dir.path("t10k-labels-idx1-ubyte.gz"), gz);
  std::vector<int> dims;
  EXPECT_NE(error_of([&] { read_idx_file(dir.path("t10k-labels-idx1-ubyte"), &dims); }).find("truncated"),
            std::string::npos);
}

TEST(IdxReader, RefusesMismatchedCounts) {
  TempDir dir;
  write_bytes(dir.path("train-images-idx3-ubyte"), idx_file(3, {4, 28, 28}, 4 * 784));
  write_bytes(dir.path("train-labels-idx1-ubyte"), idx_file(1, {3}, 3));
  EXPECT_NE(error_of([&] { load_dataset("fashion-mnist", dir.path(), Split::Train); }).find("3 labels"),
            std::string::npos);
}

TEST(IdxReader, ReadsTheDebianFashionMnist) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!directory_exists(dir)) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  Dataset test = load_dataset("fashion-mnist", dir, Split::Test);
  EXPECT_EQ(test.size(), 10000);
  std::vector<int> per_class(10);
  for (uint8_t l : test.labels) ++per_class[l];
  for (int c : per_class) EXPECT_EQ(c, 1000);
}

Dataset numbered_dataset(int n) {
  Dataset d;
  d.name = "cifar10";
  d.channels = 3;
  d.height = d.width = 32;
  d.num_classes = 10;
  d.images.assign(static_cast<size_t>(n) * 3072, 0);
  for (int i = 0; i < n; ++i) d.labels.push_back(static_cast<uint8_t>(i % 10));
  return d;
}

class LoaderCoverage : public ::testing::TestWithParam<int> {};

TEST_P(LoaderCoverage, EverySampleOncePerEpochForAnyWorkerCount) {
  const Dataset d = numbered_dataset(1003);
  LoaderOptions o;
  o.batch_size = 64;
  o.workers = GetParam();
  o.augment = true;
  o.seed = 7;
  Loader loader(d, dataset_info("cifar10"), o);
  std::vector<int64_t> first_epoch_order;
  for (int epoch = 1; epoch <= 2; ++epoch) {
    loader.start_epoch(epoch);
    std::multiset<int64_t> seen;
    std::vector<int64_t> order;
    Batch b;
    int64_t batches = 0;
    while (loader.next(&b)) {
      ++batches;
      for (int64_t i = 0; i < b.size; ++i) {
        seen.insert(b.indices[i]);
        order.push_back(b.indices[i]);
        EXPECT_EQ(b.labels[i], b.indices[i] % 10);
      }
    }
    EXPECT_EQ(batches, loader.batches_per_epoch());
    ASSERT_EQ(seen.size(), 1003u);
    for (int64_t i = 0; i < 1003; ++i) EXPECT_EQ(seen.count(i), 1u) << "sample " << i;
    if (epoch == 1) {
      first_epoch_order = order;
    } else {
      EXPECT_NE(order, first_epoch_order) << "shuffling must change between epochs";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, LoaderCoverage, ::testing::Values(0, 1, 2, 5));

TEST(Loader, BatchesAreIdenticalForEveryWorkerCount) {
  Dataset d = numbered_dataset(300);
  for (size_t i = 0; i < d.images.size(); ++i) d.images[i] = static_cast<uint8_t>((i * 31) >> 3);
  std::vector<std::vector<float>> reference;
  for (int workers : {0, 3}) {
    LoaderOptions o;
    o.batch_size = 50;
    o.workers = workers;
    o.augment = true;
    Loader loader(d, dataset_info("cifar10"), o);
    loader.start_epoch(3);
    Batch b;
    std::vector<std::vector<float>> batches;
    while (loader.next(&b)) batches.push_back(b.images);
    if (reference.empty())
      reference = batches;
    else
      EXPECT_EQ(batches, reference);
  }
}

TEST(Loader, DropLastDropsTheIncompleteBatch) {
  const Dataset d = numbered_dataset(130);
  LoaderOptions o;
  o.batch_size = 64;
  o.drop_last = true;
  Loader loader(d, dataset_info("cifar10"), o);
  loader.start_epoch(1);
  Batch b;
  int count = 0;
  while (loader.next(&b)) {
    EXPECT_EQ(b.size, 64);
    ++count;
  }
  EXPECT_EQ(count, 2);
}

}  // namespace
}  // namespace octet
