// The table of cases the operator harness (test_backend_ops) runs on every
// backend: every operator over many shapes (odd sizes, padding, stride,
// channels not a multiple of 4, 16 or 32, batch 1 to 512, requantization at
// its extremes), then whole networks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "qmodel/quantized_model.h"

namespace octet {

enum class CaseImages {
  Int8,        // integer-valued floats in [-128, 127]: their own int8 values at scale 1
  Float,       // for the input quantization: half-way cases, out of range, infinities, NaN
  Normalised,  // normalised-looking images for whole networks
};

struct OpCase {
  std::string name;  // letters, digits and underscores (a gtest name)
  int64_t batch;
  std::function<QuantizedModel()> model;
  CaseImages images = CaseImages::Int8;
  // The model fuses a residual into a convolution or linear layer, a form only
  // quantized graphs hold (the float and LibTorch checks leave it out). Said here so that choosing
  // cases builds no model: every test process lists the cases.
  bool fused_residual = false;
};

// Whether a node of `g` adds a residual it absorbs (what `fused_residual` says).
bool has_fused_residual(const Graph& g);

const std::vector<OpCase>& op_cases();

// A case name's shape part: "b<batch>_<c>x<h>x<w>".
std::string shape_name(int64_t batch, int c, int h, int w);

// `batch` images for a case whose input has per-sample shape `shape`.
std::vector<float> case_images(const OpCase& c, const ActShape& shape, int64_t batch, uint64_t seed);

}  // namespace octet
