// Reading an ONNX file's constants and attributes for the importer: every
// size is checked against the bytes actually present before anything is
// allocated, so a truncated or lying file is refused, never trusted.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/tensor.h"

namespace octet::onnx_import {

// A floating-point tensor as float32: FLOAT (raw_data or float_data),
// FLOAT16 and BFLOAT16 (raw_data or int32_data; exact), DOUBLE (raw_data or
// double_data; rounded); fails naming `what` for another type, external data,
// a size the data does not hold, or values that are not finite in float32.
FloatTensor float_tensor(const onnx::TensorProto& t, const std::string& what);
// An INT64 or INT32 tensor's values (shapes, axes, indices).
std::vector<int64_t> int_tensor(const onnx::TensorProto& t, const std::string& what);
bool is_float(const onnx::TensorProto& t);  // of a type float_tensor reads
bool is_float_type(int64_t type);           // FLOAT, FLOAT16, BFLOAT16 or DOUBLE (octet computes them in float32)
std::string ints_string(const std::vector<int64_t>& v);  // "[1,2]", for messages

// Attributes of a node, with defaults where absent.
const onnx::AttributeProto* attribute(const onnx::NodeProto& n, const std::string& name);
int64_t int_attribute(const onnx::NodeProto& n, const std::string& name, int64_t fallback);
float float_attribute(const onnx::NodeProto& n, const std::string& name, float fallback);
std::vector<int64_t> ints_attribute(const onnx::NodeProto& n, const std::string& name, std::vector<int64_t> fallback);
std::string string_attribute(const onnx::NodeProto& n, const std::string& name, const std::string& fallback);

}  // namespace octet::onnx_import
