// The integer arithmetic exporters write on shapes (torch.onnx.export's
// x.size(0), x.view(b, g, c // g, h, w), chunk's Slice bounds, F.pad's pads;
// tf2onnx's Shape/Gather/Concat chains), evaluated while importing: every dimension but
// the batch is fixed, so each value is known, or is the batch size (symbolic).
#pragma once

#include <onnx/onnx_pb.h>

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/tensor.h"

namespace octet::onnx_import {

constexpr int64_t kBatchDim = INT64_MIN;        // the batch size, known only at run time
constexpr int64_t kUnknownDim = INT64_MIN + 1;  // a value the evaluation cannot tell

struct ShapeValue {
  std::vector<int64_t> values;
  bool scalar = false;  // rank 0 (one value), else rank 1 or 2
  // Rank 2: the values row by row, this many to a row. F.pad's pads are
  // reshaped to pairs, their rows reversed and transposed into ONNX's order.
  int64_t columns = 0;
};

// A constant's values (an integer initializer or Constant node). A value at
// or below kUnknownDim, e.g. -INT64_MAX (torch's end of a backwards slice),
// is one past it: as a slice bound it means the same, and it is not taken
// for the batch size or an unknown value.
ShapeValue constant_shape_value(std::vector<int64_t> values, bool scalar);

// The values as a float tensor (shape arithmetic cast to float), where each is known and the value is of rank 0
// or 1; else nullopt.
std::optional<FloatTensor> known_values(const ShapeValue& v);

// Whether octet evaluates `op_type` on shape values (Shape itself is made by the importer).
bool is_shape_op(const std::string& op_type);

// The outputs of a shape node from its inputs' values (null for an absent
// optional input); fails saying why for what it cannot evaluate.
std::vector<ShapeValue> evaluate_shape_op(const onnx::NodeProto& n, const std::vector<const ShapeValue*>& inputs);

// "[batch,3,224,224]", for messages.
std::string shape_value_string(const ShapeValue& v);

}  // namespace octet::onnx_import
