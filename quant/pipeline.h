// The quantization pipeline as one call, shared by `octet quantize`,
// `octet pipeline` and the Python module: fold the checkpoint, calibrate on
// training images, choose scales, build the quantized model.
#pragma once

#include <string>

#include "quant/quantize.h"

namespace octet {

// `dir` if given, else the dataset's default folder; fails when neither exists.
std::string resolve_data_dir(const std::string& dataset, const std::string& dir);

struct QuantizeResult {
  QuantizedModel model;
  Calibration calibration;  // statistics per float inference node
  FloatModel folded;
};

QuantizeResult quantize_checkpoint(const Checkpoint& checkpoint, const std::string& data_dir,
                                   const QuantizeOptions& options, int64_t calibration_samples = 1024);

}  // namespace octet
