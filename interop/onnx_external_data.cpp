#include "interop/onnx_external_data.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "common/error.h"

namespace octet::onnx_import {

namespace {

// A non-negative decimal offset or length, as ONNX writes it.
int64_t byte_count(const std::string& text, const std::string& what) {
  check(!text.empty() && text.size() <= 18 &&
            std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }),
        what + " '" + text + "' is not a byte count");
  return std::stoll(text);
}

// The file `location` names, in the model's folder or below it.
std::filesystem::path data_file(const std::filesystem::path& folder, const std::string& location,
                                const std::string& what) {
  const std::filesystem::path relative(location);
  bool climbs = false;
  for (const auto& part : relative) climbs = climbs || part == "..";
  check(!location.empty() && !relative.has_root_path() && !climbs,
        what + " names '" + location + "', outside the model's folder (ONNX's locations are relative to it, without "
               "'..')");
  return folder / relative;
}

void read_tensor(onnx::TensorProto& t, const std::filesystem::path& folder, const std::string& where) {
  const std::string what = where + ": tensor '" + t.name() + "' (external data)";
  std::string location, offset_text = "0", length_text;
  for (const auto& entry : t.external_data()) {
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "offset") offset_text = entry.value();
    if (entry.key() == "length") length_text = entry.value();
  }
  const std::filesystem::path file = data_file(folder, location, what);
  std::error_code error;
  const auto size = std::filesystem::file_size(file, error);
  check(!error && std::filesystem::is_regular_file(file, error),
        what + ": its file '" + location + "' is not beside the model (" + file.string() + ")");
  const int64_t bytes = static_cast<int64_t>(size), offset = byte_count(offset_text, what + " offset");
  const int64_t length = length_text.empty() ? bytes - offset : byte_count(length_text, what + " length");
  check(offset <= bytes && length <= bytes - offset,
        what + " reads bytes " + std::to_string(offset) + " to " + std::to_string(offset + length) + " of '" +
            location + "', which holds " + std::to_string(bytes));
  std::string data(static_cast<size_t>(length), '\0');
  std::ifstream in(file, std::ios::binary);
  in.seekg(offset);
  check(static_cast<bool>(in.read(data.data(), length)), what + ": '" + location + "' could not be read");
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
  t.set_raw_data(std::move(data));
}

bool is_external(const onnx::TensorProto& t) {
  return t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0;
}

}  // namespace

void read_external_data(onnx::ModelProto& model, const std::string& model_path) {
  const std::filesystem::path folder = std::filesystem::path(model_path).parent_path();
  onnx::GraphProto& g = *model.mutable_graph();
  for (onnx::TensorProto& t : *g.mutable_initializer())
    if (is_external(t)) read_tensor(t, folder, model_path);
  for (onnx::NodeProto& n : *g.mutable_node())
    for (onnx::AttributeProto& a : *n.mutable_attribute())
      if (a.has_t() && is_external(a.t())) read_tensor(*a.mutable_t(), folder, model_path);
}

}  // namespace octet::onnx_import
