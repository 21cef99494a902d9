#include "interop/onnx_external_data.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "common/error.h"
#include "common/file_io.h"

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
std::string data_file(const std::string& folder, const std::string& location, const std::string& what) {
  bool climbs = false;
  for (size_t start = 0; start <= location.size();) {
    const size_t end = location.find_first_of("/\\", start);
    climbs = climbs || location.compare(start, (end == std::string::npos ? location.size() : end) - start, "..") == 0;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  check(!location.empty(), what + " names no file (its 'location' entry is missing or empty)");
  check(location.front() != '/' && !climbs,
        what + " names '" + location + "', outside the model's folder (ONNX's locations are relative to it, without "
               "'..')");
  return folder.empty() ? location : folder + "/" + location;
}

void read_tensor(onnx::TensorProto& t, const std::string& folder, const std::string& where) {
  const std::string what = where + ": tensor '" + t.name() + "' (external data)";
  std::string location, offset_text = "0", length_text;
  for (const auto& entry : t.external_data()) {
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "offset") offset_text = entry.value();
    if (entry.key() == "length") length_text = entry.value();
  }
  const std::string file = data_file(folder, location, what);
  check(file_exists(file), what + ": its file '" + location + "' is not beside the model (" + file + ")");
  const int64_t bytes = file_size(file), offset = byte_count(offset_text, what + " offset");
  const int64_t length = length_text.empty() ? bytes - offset : byte_count(length_text, what + " length");
  check(offset <= bytes && length <= bytes - offset,
        what + " reads bytes " + std::to_string(offset) + " to " + std::to_string(offset + length) + " of '" +
            location + "', which holds " + std::to_string(bytes));
  const std::vector<uint8_t> data = read_file_range(file, offset, length);
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
  t.set_raw_data(data.data(), data.size());
}

bool is_external(const onnx::TensorProto& t) {
  return t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0;
}

}  // namespace

void read_external_data(onnx::ModelProto& model, const std::string& model_path) {
  const size_t slash = model_path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "" : model_path.substr(0, slash == 0 ? 1 : slash);
  onnx::GraphProto& g = *model.mutable_graph();
  for (onnx::TensorProto& t : *g.mutable_initializer())
    if (is_external(t)) read_tensor(t, folder, model_path);
  for (onnx::NodeProto& n : *g.mutable_node())
    for (onnx::AttributeProto& a : *n.mutable_attribute())
      if (a.has_t() && is_external(a.t())) read_tensor(*a.mutable_t(), folder, model_path);
}

}  // namespace octet::onnx_import
