// From a float model and its calibration to the quantized model.
//
// Quantization points (tensors with a scale of their own): the input, every
// conv and linear output, every add, every average pool. Max-pool, flatten,
// ReLU and the option-A shortcut keep their input's scale. An add whose input
// is a conv (or linear) read by nothing else is fused into it: the conv's
// epilogue adds the rescaled residual before the ReLU, so that conv output is
// never rounded to int8 on its own. The last linear outputs int32 logits.
#pragma once

#include <string>
#include <vector>

#include "calibrate/amax.h"
#include "calibrate/calibrate.h"
#include "common/phase_clock.h"
#include "quant/float_pass.h"
#include "graph/fold.h"
#include "models/checkpoint.h"
#include "qmodel/quantized_model.h"

namespace octet {

struct QuantizeOptions {
  AmaxMethod method = AmaxMethod::Auto;
  bool per_channel = true;        // weight scales per output channel, or one per tensor
  std::string scheme = "octet";   // "lab": the course lab's per-tensor weight step (max - min) / 127
  double percentile = 99.99;
  std::string weight_rounding = "gptq";  // or "nearest" (the lab scheme always rounds to nearest)
  int64_t auto_samples = 1024;    // calibration images `auto` ranks, to score the 512 most sensitive (at most all)
  bool exhaustive_auto = false;   // `auto` by brute force (choose_auto_amax_exhaustive): the same choice, for tests
  int64_t gptq_samples = 512;     // calibration images GPTQ estimates layer inputs from
  // Nodes of the quantized graph kept in float (mixed precision, NodeQuant::in_float),
  // by name; an add fused into a conv is named by that conv.
  std::vector<std::string> float_nodes;
  // Cross-layer equalization of conv pairs before calibration (quant/equalize.h;
  // applied by quantize_checkpoint, which calibrates: quantize() takes the
  // model as given), and bias correction of the weights' rounding
  // (quant/bias_correction.h).
  bool equalize = false;
  bool bias_correction = false;
  // Tensors that cannot be negative (quant/non_negative.h) use all 256 levels:
  // uint8 stored with zero point -128, scale 255 / amax. Otherwise every
  // activation is signed int8, scale 127 / amax.
  bool unsigned_activations = false;
  // Up to this many bits (9-16; 8: none) for every signed conv output read only
  // by dense convs (NodeQuant::bits), fewer where a reader's depth K needs it
  // for exact int32 sums (bits <= 24 - ceil(log2 K)). MobileNetV2's residual
  // stream: agreement 98.86% at 8, 99.10% at 16 (the zoo model). The command
  // line's default is 16 (NamedQuantizeOptions); 8 here, what CUDA reads.
  int wide_bits = 8;
};

// The float pass record `options` needs (GPTQ statistics, auto's logits) over
// `calibration_samples` images, still empty: for the calibration pass to fill.
FloatPassRecord float_pass_record(const FloatExecutor& executor, const QuantizeOptions& options,
                                  int64_t calibration_samples);

// `clock`, when given, times the weight rounding, amax search and assembly
// phases. Without `record` (made by float_pass_record and filled by the
// calibration pass), quantize() runs that float pass itself.
QuantizedModel quantize(const Checkpoint& checkpoint, const FloatModel& folded, const Calibration& calibration,
                        const QuantizeOptions& options, PhaseClock* clock = nullptr,
                        const FloatPassRecord* record = nullptr);

// Symmetric per-channel (or per-tensor) int8 weights: s_w = 127 / amax, or the
// lab's 127 / (max - min). Fails naming the layer on NaN or infinite weights;
// an all-zero channel gets scale 1.
struct QuantizedWeights {
  Int8Tensor values;
  FloatTensor scales;  // [O]
};
QuantizedWeights quantize_weights(const FloatTensor& weight, bool per_channel, bool lab_scheme,
                                  const std::string& layer);

}  // namespace octet
