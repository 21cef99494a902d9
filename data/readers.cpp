// File readers: CIFAR-10 binary batches and IDX files (plain or gzip).
#include <zlib.h>

#include <cstring>

#include "common/error.h"
#include "common/file_io.h"
#include "data/dataset.h"

namespace octet {

namespace {
constexpr int64_t kCifarRecord = 1 + 3 * 32 * 32;

std::vector<uint8_t> read_maybe_gzip(const std::string& path) {
  std::string actual = path;
  if (!file_exists(actual) && file_exists(path + ".gz")) actual = path + ".gz";
  check(file_exists(actual), "missing dataset file '" + path + "' (nor '" + path + ".gz')");
  std::vector<uint8_t> raw = read_file_bytes(actual);
  if (raw.size() < 2 || raw[0] != 0x1f || raw[1] != 0x8b) return raw;

  z_stream z{};
  check(inflateInit2(&z, 15 + 32) == Z_OK, "zlib initialisation failed");
  std::vector<uint8_t> out(raw.size() * 4 + 1024);
  z.next_in = raw.data();
  z.avail_in = static_cast<uInt>(raw.size());
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    if (z.total_out == out.size()) out.resize(out.size() * 2);
    z.next_out = out.data() + z.total_out;
    z.avail_out = static_cast<uInt>(out.size() - z.total_out);
    status = inflate(&z, Z_NO_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END) {
      inflateEnd(&z);
      fail(actual + ": corrupt or truncated gzip data");
    }
    if (status == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      fail(actual + ": gzip stream ends early (truncated file)");
    }
  }
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

uint32_t big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}
}  // namespace

namespace {
// Appends one 3073-byte record (label, pixels), record `r` of `path`.
void append_cifar10_record(const uint8_t* rec, const std::string& path, int64_t r, Dataset* data) {
  check(rec[0] <= 9, path + ": record " + std::to_string(r) + " has label " + std::to_string(rec[0]) +
                         " (CIFAR-10 labels are 0..9)");
  data->labels.push_back(rec[0]);
  data->images.insert(data->images.end(), rec + 1, rec + kCifarRecord);
}
}  // namespace

int64_t cifar10_record_count(const std::string& path) {
  check(file_exists(path), "missing CIFAR-10 file '" + path + "'");
  const int64_t size = file_size(path);
  check(size > 0, path + ": file is empty");
  check(size % kCifarRecord == 0, path + ": size " + std::to_string(size) +
                                      " is not a multiple of the 3073-byte CIFAR-10 record "
                                      "(truncated, or not the binary version)");
  return size / kCifarRecord;
}

void read_cifar10_file(const std::string& path, Dataset* data) {
  const int64_t records = cifar10_record_count(path);
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  check(static_cast<int64_t>(bytes.size()) == records * kCifarRecord, path + ": changed while being read");
  data->images.reserve(data->images.size() + records * (kCifarRecord - 1));
  data->labels.reserve(data->labels.size() + records);
  for (int64_t r = 0; r < records; ++r) append_cifar10_record(bytes.data() + r * kCifarRecord, path, r, data);
}

void read_cifar10_records(const std::string& path, const std::vector<int64_t>& records, Dataset* data) {
  const int64_t count = cifar10_record_count(path);
  for (int64_t r : records) {
    check(r >= 0 && r < count, path + ": record " + std::to_string(r) + " out of range");
    append_cifar10_record(read_file_range(path, r * kCifarRecord, kCifarRecord).data(), path, r, data);
  }
}

std::vector<uint8_t> read_idx_file(const std::string& path, std::vector<int>* dims) {
  const std::vector<uint8_t> bytes = read_maybe_gzip(path);
  check(bytes.size() >= 4, path + ": too short for an IDX header");
  check(bytes[0] == 0 && bytes[1] == 0 && bytes[2] == 0x08,
        path + ": not an IDX file of unsigned bytes (bad magic number)");
  const int ndims = bytes[3];
  check(ndims >= 1 && bytes.size() >= 4 + 4 * static_cast<size_t>(ndims), path + ": truncated IDX header");
  dims->clear();
  const size_t offset = 4 + 4 * static_cast<size_t>(ndims);
  uint64_t count = 1;
  for (int d = 0; d < ndims; ++d) {
    const uint32_t dim = big_endian_u32(bytes.data() + 4 + 4 * d);
    check(dim <= 0x7fffffffu && !__builtin_mul_overflow(count, uint64_t{dim}, &count) && count <= bytes.size() - offset,
          path + ": its header announces more data than the file's " + std::to_string(bytes.size() - offset) +
              " bytes (truncated?)");
    dims->push_back(static_cast<int>(dim));
  }
  check(bytes.size() - offset == count, path + ": holds " + std::to_string(bytes.size() - offset) +
                                            " data bytes but its header announces " + std::to_string(count) +
                                            " (truncated?)");
  return std::vector<uint8_t>(bytes.begin() + static_cast<std::ptrdiff_t>(offset), bytes.end());
}

}  // namespace octet
