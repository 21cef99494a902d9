#include "common/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_io.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "octet's file formats assume a little-endian host");

namespace octet {

namespace {
// A header larger than this is certainly not one of ours; refusing it early
// avoids allocating gigabytes for a corrupt length field.
constexpr uint64_t kMaxHeaderBytes = 256ull << 20;

bool parse_dtype(const std::string& s, DType* out) {
  for (DType d : {DType::F32, DType::I32, DType::I8, DType::U8}) {
    if (s == dtype_name(d)) {
      *out = d;
      return true;
    }
  }
  return false;
}
}  // namespace

std::string shape_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F32: return "F32";
    case DType::I32: return "I32";
    case DType::I8: return "I8";
    case DType::U8: return "U8";
  }
  return "?";
}

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::F32:
    case DType::I32: return 4;
    case DType::I8:
    case DType::U8: return 1;
  }
  return 0;
}

template <typename T>
void TensorFile::put(const std::string& name, const Tensor<T>& tensor) {
  check(static_cast<int64_t>(tensor.data.size()) == shape_numel(tensor.shape),
        "tensor '" + name + "' has " + std::to_string(tensor.data.size()) + " values for shape " +
            shape_string(tensor.shape));
  StoredTensor& stored = tensors_[name];
  stored.dtype = dtype_of<T>();
  stored.shape = tensor.shape;
  stored.bytes.resize(tensor.data.size() * sizeof(T));
  if (!stored.bytes.empty()) std::memcpy(stored.bytes.data(), tensor.data.data(), stored.bytes.size());
}

template <typename T>
Tensor<T> TensorFile::get(const std::string& name) const {
  auto it = tensors_.find(name);
  check(it != tensors_.end(), source_ + ": tensor '" + name + "' is missing");
  const StoredTensor& stored = it->second;
  check(stored.dtype == dtype_of<T>(), source_ + ": tensor '" + name + "' has dtype " + dtype_name(stored.dtype) +
                                           ", expected " + dtype_name(dtype_of<T>()));
  Tensor<T> tensor;
  tensor.shape = stored.shape;
  tensor.data.resize(stored.bytes.size() / sizeof(T));
  if (!stored.bytes.empty()) std::memcpy(tensor.data.data(), stored.bytes.data(), stored.bytes.size());
  return tensor;
}

template void TensorFile::put<float>(const std::string&, const Tensor<float>&);
template void TensorFile::put<int32_t>(const std::string&, const Tensor<int32_t>&);
template void TensorFile::put<int8_t>(const std::string&, const Tensor<int8_t>&);
template void TensorFile::put<uint8_t>(const std::string&, const Tensor<uint8_t>&);
template Tensor<float> TensorFile::get<float>(const std::string&) const;
template Tensor<int32_t> TensorFile::get<int32_t>(const std::string&) const;
template Tensor<int8_t> TensorFile::get<int8_t>(const std::string&) const;
template Tensor<uint8_t> TensorFile::get<uint8_t>(const std::string&) const;

const std::string& TensorFile::meta(const std::string& key) const {
  auto it = metadata.find(key);
  check(it != metadata.end(), source_ + ": metadata key '" + key + "' is missing");
  return it->second;
}

void TensorFile::check_format(const std::string& format, int version, const std::string& kind) const {
  auto found = metadata.find("format");
  check(found != metadata.end() && found->second == format,
        source_ + ": not an octet " + kind + " (metadata 'format' is " +
            (found == metadata.end() ? "absent" : "'" + found->second + "'") + ", expected '" + format + "')");
  check(meta("format_version") == std::to_string(version),
        source_ + ": " + kind + " format version " + meta("format_version") + " is not supported (this octet reads " +
            std::to_string(version) + ")");
}

void TensorFile::save(const std::string& path) const {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const auto& [name, stored] : tensors_) {
    header[name] = {{"dtype", dtype_name(stored.dtype)},
                    {"shape", stored.shape},
                    {"data_offsets", {offset, offset + stored.bytes.size()}}};
    offset += stored.bytes.size();
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned
  write_file_atomically(path, [&](std::ostream& out) {
    const uint64_t length = text.size();
    out.write(reinterpret_cast<const char*>(&length), sizeof(length));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& entry : tensors_) {
      const auto& bytes = entry.second.bytes;
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
  });
}

TensorFile TensorFile::load(const std::string& path) { return parse(read_file_bytes(path), path); }

TensorFile TensorFile::parse(const std::vector<uint8_t>& bytes, const std::string& source) {
  const std::string where = source + ": ";
  check(bytes.size() >= 8, where + "file is " + std::to_string(bytes.size()) +
                               " bytes, too short for a safetensors header (truncated or not an octet file)");
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  check(header_len <= kMaxHeaderBytes && header_len <= bytes.size() - 8,
        where + "header length " + std::to_string(header_len) + " exceeds the file size " +
            std::to_string(bytes.size()) + " (truncated or not an octet file)");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(header_len));
  } catch (const nlohmann::json::exception& e) {
    fail(where + "header is not valid JSON (not an octet file?): " + e.what());
  }
  check(header.is_object(), where + "header is not a JSON object");

  TensorFile file;
  file.source_ = source;
  const uint64_t data_size = bytes.size() - 8 - header_len;
  const uint8_t* data = bytes.data() + 8 + header_len;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& entry = it.value();
    if (name == "__metadata__") {
      check(entry.is_object(), where + "__metadata__ is not an object");
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        check(m.value().is_string(), where + "__metadata__ value '" + m.key() + "' is not a string");
        file.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string what = where + "tensor '" + name + "': ";
    check(entry.is_object() && entry.contains("dtype") && entry.contains("shape") && entry.contains("data_offsets"),
          what + "entry needs dtype, shape and data_offsets");
    StoredTensor stored;
    check(entry["dtype"].is_string() && parse_dtype(entry["dtype"].get<std::string>(), &stored.dtype),
          what + "unsupported dtype " + entry["dtype"].dump());
    check(entry["shape"].is_array(), what + "shape is not an array");
    // The element count, multiplied in shape_numel's order: if it fits int64
    // here, no later shape_numel of this shape overflows.
    int64_t numel = 1;
    for (const auto& d : entry["shape"]) {
      check(d.is_number_integer() && d.get<int64_t>() >= 0, what + "shape has a bad dimension " + d.dump());
      stored.shape.push_back(d.get<int64_t>());
      check(!__builtin_mul_overflow(numel, stored.shape.back(), &numel) && numel <= (int64_t{1} << 60),
            what + "shape " + entry["shape"].dump() + " has too many elements");
    }
    const auto& offsets = entry["data_offsets"];
    check(offsets.is_array() && offsets.size() == 2 && offsets[0].is_number_unsigned() &&
              offsets[1].is_number_unsigned(),
          what + "data_offsets must be two non-negative integers");
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    check(begin <= end && end <= data_size, what + "data_offsets [" + std::to_string(begin) + ", " +
                                                std::to_string(end) + "] lie outside the " +
                                                std::to_string(data_size) + " data bytes (truncated file?)");
    const uint64_t expected = static_cast<uint64_t>(numel) * dtype_size(stored.dtype);
    check(end - begin == expected, what + "holds " + std::to_string(end - begin) + " bytes but shape " +
                                       shape_string(stored.shape) + " of " + dtype_name(stored.dtype) +
                                       " needs " + std::to_string(expected));
    stored.bytes.assign(data + begin, data + end);
    ranges.emplace_back(begin, end);
    file.tensors_[name] = std::move(stored);
  }
  std::sort(ranges.begin(), ranges.end());
  uint64_t covered = 0;
  for (const auto& [begin, end] : ranges) {
    check(begin == covered, where + "tensor data overlaps or leaves a gap at byte " + std::to_string(covered));
    covered = end;
  }
  check(covered == data_size, where + std::to_string(data_size - covered) + " trailing bytes after the last tensor");
  return file;
}

}  // namespace octet
