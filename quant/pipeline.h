// The quantization pipeline as one call, shared by `octet quantize`,
// `octet pipeline` and the Python module: fold the checkpoint, calibrate on
// training images (or the user's own, DataOptions), choose scales, build the
// quantized model.
#pragma once

#include <string>
#include <vector>

#include "data/user_data.h"
#include "quant/equalize.h"
#include "quant/quantize.h"

namespace octet {

// The calibration pass's multiply-adds (the network's per image times the
// calibration images) above which the defaults are auto-global amax and
// nearest rounding instead of auto and GPTQ, which cost more than 4x the pass
// on such a network: on a one-epoch CIFAR ResNet-18, 1,024 images (569 G), they
// took 21.0 s against 4.6 s, agreeing with float on 97.08% and 97.24% of the
// test set (torch.ao: 6.5-6.9 s, 96.25%). The zoo's networks are all below
// (ResNet-20: 42 G).
constexpr double kFullDefaultsMacs = 200e9;

// Multiply-adds of `samples` images through `graph`.
double calibration_macs(const Graph& graph, int64_t samples);

// The command line's --wide-bits when not named (QuantizeOptions::wide_bits).
constexpr int kDefaultWideBits = 16;

// The quantizer's options as the command line and the Python module name them.
struct NamedQuantizeOptions {
  // method and weight_rounding empty: the defaults for the network, auto and
  // gptq, or auto-global and nearest above kFullDefaultsMacs.
  std::string method, granularity = "per-channel", scheme = "octet", weight_rounding;
  double percentile = 99.99;
  int64_t calibration_samples = 1024;
  int64_t auto_samples = QuantizeOptions{}.auto_samples;
  std::vector<std::string> float_nodes;  // kept in float (QuantizeOptions::float_nodes)
  bool equalize = false, bias_correction = false;
  // "unsigned" (QuantizeOptions::unsigned_activations) or "signed"; empty:
  // unsigned, but signed for the lab scheme (the course lab's int8). Unsigned
  // raised agreement with float on every zoo model (lenet5_cifar10 98.75% to
  // 99.10%, ResNet-20 99.47% to 99.58%, MobileNetV2 98.35% to 98.86%); the
  // CUDA runtime does not read such models yet.
  std::string activations;
  // QuantizeOptions::wide_bits; 0: kDefaultWideBits, but 8 for the lab scheme (the course lab's int8).
  int wide_bits = 0;

  // Whether an unnamed method or weight_rounding gets the large network's
  // default on `checkpoint`.
  bool large_network_defaults(const Checkpoint& checkpoint) const;
  // Fails naming the option whose value is unknown.
  QuantizeOptions options(const Checkpoint& checkpoint) const;
};

struct QuantizeResult {
  QuantizedModel model;
  Calibration calibration;  // statistics per float inference node
  FloatModel folded;        // the float model quantized: equalized when asked
  std::vector<EqualizedPair> equalized;
};

// What images must fit to be a model's input: its dataset, shape, classes.
ModelInput model_input(const Checkpoint& checkpoint);
ModelInput model_input(const QuantizedModel& model);

// The checkpoint's calibration images: `samples` training images (or of
// data.calib) at evenly spaced indices, normalised like its training (NCHW;
// a .npy's are already). Only those images are read (CIFAR-10, image
// folders, .npy), or the split is freed before this returns (IDX files).
std::vector<float> calibration_images(const Checkpoint& checkpoint, const DataOptions& data, int64_t samples);

// `clock`, when given, times the phases: loading (folding, the dataset), the
// calibration pass, then those of quantize().
QuantizeResult quantize_checkpoint(const Checkpoint& checkpoint, const DataOptions& data,
                                   const QuantizeOptions& options, int64_t calibration_samples = 1024,
                                   PhaseClock* clock = nullptr);
// The same on calibration inputs the caller gives (N x C x H x W, normalised):
// the Python module's arrays.
QuantizeResult quantize_checkpoint_on(const Checkpoint& checkpoint, std::vector<float> images,
                                      const QuantizeOptions& options, PhaseClock* clock = nullptr);

}  // namespace octet
