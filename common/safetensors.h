// The safetensors container (https://huggingface.co/docs/safetensors): an
// 8-byte little-endian header length, a JSON header naming every tensor's
// dtype, shape and byte range, then the raw little-endian data. octet stores
// float checkpoints and quantized models in it; `__metadata__` carries the
// graph, the scales and the format version as strings.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/tensor.h"

namespace octet {

enum class DType { F32, I32, I8, U8 };

const char* dtype_name(DType dtype);
size_t dtype_size(DType dtype);

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::F32; }
template <> constexpr DType dtype_of<int32_t>() { return DType::I32; }
template <> constexpr DType dtype_of<int8_t>() { return DType::I8; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::U8; }

struct StoredTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<uint8_t> bytes;
};

class TensorFile {
 public:
  std::map<std::string, std::string> metadata;

  template <typename T>
  void put(const std::string& name, const Tensor<T>& tensor);

  // Returns the tensor, failing with a message naming `name` and this file if
  // it is missing or has another dtype.
  template <typename T>
  Tensor<T> get(const std::string& name) const;

  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  const std::map<std::string, StoredTensor>& tensors() const { return tensors_; }
  const std::string& source() const { return source_; }

  // Metadata value, failing with a clear message when the key is absent.
  const std::string& meta(const std::string& key) const;
  // Fails unless metadata "format" is `format` and "format_version" is
  // `version`; `kind` names the file type in the message ("checkpoint").
  void check_format(const std::string& format, int version, const std::string& kind) const;

  void save(const std::string& path) const;  // atomic: temp file + rename
  static TensorFile load(const std::string& path);
  static TensorFile parse(const std::vector<uint8_t>& bytes, const std::string& source);

 private:
  std::map<std::string, StoredTensor> tensors_;
  std::string source_ = "<memory>";
};

}  // namespace octet
