#include "interop/onnx_shape_values.h"

#include <algorithm>
#include <set>

#include "common/error.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

namespace {
const std::set<std::string> kShapeOps = {"Shape", "Gather",     "Unsqueeze", "Squeeze",         "Concat",  "Cast",
                                         "Slice", "Mul",        "Div",       "Add",             "Sub",     "ReduceProd",
                                         "Identity", "ConstantOfShape", "Reshape", "Transpose"};

// The most values a ConstantOfShape makes, and columns a reshape makes:
// shapes and pads are short. The most values any op makes (Concat doubling
// them, a node at a time, would otherwise outgrow memory).
constexpr int64_t kMostMadeValues = 64, kMostValues = 4096;

bool known(int64_t v) { return v != kBatchDim && v != kUnknownDim; }

const ShapeValue& input(const std::vector<const ShapeValue*>& inputs, size_t i) {
  check(i < inputs.size() && inputs[i], "input " + std::to_string(i) + " is missing");
  return *inputs[i];
}

const ShapeValue& vector_input(const std::vector<const ShapeValue*>& inputs, size_t i) {
  const ShapeValue& v = input(inputs, i);
  check(v.columns == 0, "input " + std::to_string(i) + " of rank 2");
  return v;
}

int64_t rows(const ShapeValue& v) {
  return v.columns ? static_cast<int64_t>(v.values.size()) / v.columns : static_cast<int64_t>(v.values.size());
}

// Constant indices or axes: every value known.
std::vector<int64_t> constants(const std::vector<const ShapeValue*>& inputs, size_t i, const char* what) {
  const ShapeValue& v = input(inputs, i);
  for (int64_t x : v.values) check(known(x), std::string(what) + " that are not constants");
  return v.values;
}

int64_t arithmetic(const std::string& op, int64_t a, int64_t b) {
  if (op == "Mul") {
    if (a == kBatchDim && b == 1) return a;
    if (b == kBatchDim && a == 1) return b;
  }
  if (op == "Div" && a == kBatchDim && b == 1) return a;
  if ((op == "Add" || op == "Sub") && a == kBatchDim && b == 0) return a;
  if (!known(a) || !known(b)) return kUnknownDim;
  int64_t y = 0;
  const bool overflow = op == "Mul"   ? __builtin_mul_overflow(a, b, &y)
                        : op == "Add" ? __builtin_add_overflow(a, b, &y)
                        : op == "Sub" ? __builtin_sub_overflow(a, b, &y)
                                      : false;
  if (op != "Div") return overflow || !known(y) ? kUnknownDim : y;
  check(b != 0, "a division by zero");
  return a / b;  // ONNX's integer Div truncates
}

ShapeValue elementwise(const std::string& op, const ShapeValue& a, const ShapeValue& b) {
  const size_t n = std::max(a.values.size(), b.values.size());
  check((a.values.size() == n || a.values.size() == 1) && (b.values.size() == n || b.values.size() == 1),
        "operands of " + std::to_string(a.values.size()) + " and " + std::to_string(b.values.size()) + " values");
  ShapeValue y;
  y.scalar = a.scalar && b.scalar;
  for (size_t k = 0; k < n; ++k)
    y.values.push_back(arithmetic(op, a.values[a.values.size() == 1 ? 0 : k], b.values[b.values.size() == 1 ? 0 : k]));
  return y;
}

int64_t wrap(int64_t index, int64_t size) {
  const int64_t i = index < 0 ? index + size : index;
  check(i >= 0 && i < size, "index " + std::to_string(index) + " outside " + std::to_string(size) + " values");
  return i;
}
}  // namespace

ShapeValue constant_shape_value(std::vector<int64_t> values, bool scalar) {
  for (int64_t& v : values) v = std::max(v, kUnknownDim + 1);
  ShapeValue y;
  y.values = std::move(values);
  y.scalar = scalar;
  return y;
}

std::optional<FloatTensor> known_values(const ShapeValue& v) {
  if (v.columns != 0 || std::any_of(v.values.begin(), v.values.end(), [](int64_t k) { return k <= kUnknownDim; }))
    return std::nullopt;
  FloatTensor t(v.scalar ? Shape{} : Shape{static_cast<int64_t>(v.values.size())});
  std::transform(v.values.begin(), v.values.end(), t.data.begin(), [](int64_t k) { return static_cast<float>(k); });
  return t;
}

bool is_shape_op(const std::string& op_type) { return kShapeOps.count(op_type) > 0; }

std::vector<ShapeValue> evaluate_shape_op(const onnx::NodeProto& n, const std::vector<const ShapeValue*>& inputs) {
  const std::string& op = n.op_type();
  const ShapeValue& x = input(inputs, 0);
  ShapeValue y;
  if (op == "Cast" || op == "Identity") {
    y = x;
  } else if (op == "ConstantOfShape") {
    const std::vector<int64_t> count = constants(inputs, 0, "a size");
    check(x.columns == 0 && count.size() == 1 && count[0] >= 0 && count[0] <= kMostMadeValues,
          "a ConstantOfShape of shape " + shape_value_string(x) + " (octet makes at most " +
              std::to_string(kMostMadeValues) + " values, in one dimension)");
    std::vector<int64_t> fill = {0};
    if (const onnx::AttributeProto* value = attribute(n, "value")) fill = int_tensor(value->t(), "its value");
    check(fill.size() == 1, "a value of " + std::to_string(fill.size()) + " numbers");
    y.values.assign(static_cast<size_t>(count[0]), fill[0]);
  } else if (op == "Reshape") {
    const std::vector<int64_t> shape = constants(inputs, 1, "a shape");
    const int64_t size = static_cast<int64_t>(x.values.size());
    const bool matrix = shape.size() == 2 && shape[1] > 0 && shape[1] <= kMostMadeValues && size % shape[1] == 0 &&
                        (shape[0] == -1 || shape[0] == size / shape[1]);
    check((shape.size() == 1 && (shape[0] == -1 || shape[0] == size)) || matrix,
          "a reshape of " + std::to_string(size) + " values to " + ints_string(shape));
    y.values = x.values;
    y.columns = matrix ? shape[1] : 0;
  } else if (op == "Transpose") {
    check(x.columns > 0, "a transpose of " + shape_value_string(x));
    const std::vector<int64_t> perm = ints_attribute(n, "perm", {1, 0});
    check(perm == std::vector<int64_t>{1, 0}, "a transpose by " + ints_string(perm));
    const int64_t r = rows(x);
    for (int64_t c = 0; c < x.columns; ++c)
      for (int64_t k = 0; k < r; ++k) y.values.push_back(x.values[static_cast<size_t>(k * x.columns + c)]);
    y.columns = r;
  } else if (op == "Gather") {
    vector_input(inputs, 0);
    check(int_attribute(n, "axis", 0) == 0, "a gather on an axis other than 0");
    const ShapeValue& indices = input(inputs, 1);
    y.scalar = indices.scalar;
    for (int64_t i : constants(inputs, 1, "indices"))
      y.values.push_back(x.values[static_cast<size_t>(wrap(i, static_cast<int64_t>(x.values.size())))]);
  } else if (op == "Unsqueeze") {
    check(x.scalar && x.columns == 0, "an unsqueeze of more than one value");
    y.values = x.values;
  } else if (op == "Squeeze") {
    check(x.values.size() == 1 && x.columns == 0, "a squeeze of " + std::to_string(x.values.size()) + " values");
    y.values = x.values;
    y.scalar = true;
  } else if (op == "Concat") {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ShapeValue& part = vector_input(inputs, i);
      y.values.insert(y.values.end(), part.values.begin(), part.values.end());
    }
  } else if (op == "Slice") {
    // Rows of the first axis (values of a vector), forwards or backwards.
    const std::vector<int64_t> starts = constants(inputs, 1, "starts"), ends = constants(inputs, 2, "ends");
    check(starts.size() == 1 && ends.size() == 1, "a slice on more than one axis of a shape");
    check(inputs.size() < 4 || !inputs[3] || constants(inputs, 3, "axes") == std::vector<int64_t>{0} ||
              (x.columns == 0 && constants(inputs, 3, "axes") == std::vector<int64_t>{-1}),
          "a slice of a shape on an axis other than the first");
    const std::vector<int64_t> steps =
        inputs.size() < 5 || !inputs[4] ? std::vector<int64_t>{1} : constants(inputs, 4, "steps");
    check(steps.size() == 1 && steps[0] != 0, "a slice with steps " + ints_string(steps));
    const int64_t step = steps[0], size = rows(x), width = x.columns ? x.columns : 1;
    // ONNX's clamping: [0, size] going forwards, [-1, size - 1] going backwards.
    const auto clamp = [&](int64_t v) {
      v = v < 0 ? std::max(v, -size - 1) + size : v;
      return step > 0 ? std::min(std::max(v, int64_t{0}), size) : std::min(std::max(v, int64_t{-1}), size - 1);
    };
    for (int64_t k = clamp(starts[0]); step > 0 ? k < clamp(ends[0]) : k > clamp(ends[0]); k += step)
      y.values.insert(y.values.end(), x.values.begin() + k * width, x.values.begin() + (k + 1) * width);
    y.columns = x.columns;
  } else if (op == "ReduceProd") {
    int64_t product = 1;
    for (int64_t v : x.values)
      if (!known(v) || !known(product) || __builtin_mul_overflow(product, v, &product) || !known(product))
        product = kUnknownDim;
    y.values = {product};
    y.scalar = int_attribute(n, "keepdims", 1) == 0;
  } else if (op == "Mul" || op == "Div" || op == "Add" || op == "Sub") {
    y = elementwise(op, x, input(inputs, 1));
  } else {
    fail("octet does not evaluate " + op + " on shapes");
  }
  check(static_cast<int64_t>(y.values.size()) <= kMostValues,
        "a shape computation of " + std::to_string(y.values.size()) + " values (octet evaluates at most " +
            std::to_string(kMostValues) + ")");
  return {y};
}

std::string shape_value_string(const ShapeValue& v) {
  std::string s = v.scalar ? "" : "[";
  for (size_t k = 0; k < v.values.size(); ++k) {
    const int64_t x = v.values[k];
    s += (k ? "," : "") + (x == kBatchDim ? std::string("batch") : x == kUnknownDim ? "?" : std::to_string(x));
  }
  return v.scalar ? s : s + "]";
}

}  // namespace octet::onnx_import
