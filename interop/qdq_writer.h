// Writes the nodes and initializers of an ONNX QDQ graph (onnx_export.h),
// counting what it wrote.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "interop/onnx_export.h"

namespace octet {

class QdqGraphWriter {
 public:
  explicit QdqGraphWriter(onnx::GraphProto* graph) : g_(graph) {}

  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output);
  // A node with no attributes; returns its output's name.
  std::string step(const std::string& op, const std::vector<std::string>& inputs, const std::string& output);

  template <typename T>
  const std::string& initializer(const std::string& name, int data_type, const std::vector<int64_t>& dims,
                                 const std::vector<T>& values) {
    onnx::TensorProto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(data_type);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
    ++summary.initializers;
    return name;
  }

  // A shared scalar int8 zero point: QuantizeLinear's output type comes from it.
  std::string int8_zero();
  // QuantizeLinear then DequantizeLinear of a float tensor at octet scale
  // `scale` (q = x * scale): the int8 tensor octet holds, as ONNX sees it.
  std::string qdq(const std::string& x, float scale, const std::string& name);

  static void ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& values);
  static void integer(onnx::NodeProto* n, const std::string& name, int64_t value);
  static void real(onnx::NodeProto* n, const std::string& name, float value);

  onnx::GraphProto* graph() { return g_; }
  OnnxExportSummary summary;

 private:
  onnx::GraphProto* g_;
  bool has_int8_zero_ = false;
};

// A float value of the graph: name and rank-4 dimensions after the batch.
void set_float_value(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims);

}  // namespace octet
