#include "train/precision.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include "common/error.h"

// LibTorch 2.4 made autocast's switches per device type and deprecated the
// CUDA- and CPU-specific ones.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define OCTET_AUTOCAST_PER_DEVICE 1
#endif

namespace octet {

namespace {

void set_autocast(torch::DeviceType device, bool enabled, torch::ScalarType dtype) {
#ifdef OCTET_AUTOCAST_PER_DEVICE
  at::autocast::set_autocast_dtype(device, dtype);
  at::autocast::set_autocast_enabled(device, enabled);
#else
  if (device == torch::kCUDA) {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(enabled);
  }
#endif
}

bool is_amp(const TrainOptions& o) { return o.precision == "amp-fp16" || o.precision == "amp-bf16"; }

}  // namespace

void apply_precision(const TrainOptions& o, const torch::Device& device) {
  const std::string& p = o.precision;
  check(p == "fp32" || p == "tf32" || p == "amp-fp16" || p == "amp-bf16",
        "--precision must be fp32, tf32, amp-fp16 or amp-bf16, not '" + p + "'");
  check(p != "tf32" || device.is_cuda(), "--precision tf32 needs --device cuda (TF32 is a GPU matrix-math mode)");
  check(p != "amp-fp16" || device.is_cuda(),
        "--precision amp-fp16 needs --device cuda (on the CPU, use amp-bf16)");
  check(!o.cuda_graph || device.is_cuda(), "--cuda-graph needs --device cuda (it captures the step in a CUDA graph)");
  check(!o.cuda_graph || p != "amp-fp16",
        "--cuda-graph does not take --precision amp-fp16: its loss scaler decides on the host whether to step");
  if (device.is_cuda()) {
    at::globalContext().setAllowTF32CuBLAS(p == "tf32");
    at::globalContext().setAllowTF32CuDNN(p == "tf32");
  }
}

bool uses_loss_scaling(const TrainOptions& o) { return o.precision == "amp-fp16"; }

AutocastScope::AutocastScope(const TrainOptions& o, const torch::Device& device)
    : enabled_(is_amp(o)),
      device_type_(device.type()),
      dtype_(o.precision == "amp-fp16" ? torch::kHalf : torch::kBFloat16) {
  if (!enabled_) return;
  at::autocast::increment_nesting();
  set_autocast(device_type_, true, dtype_);
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  set_autocast(device_type_, false, dtype_);
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
}

void to_channels_last(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  for (torch::Tensor p : params)
    if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
}

torch::Tensor input_layout(const torch::Tensor& images, bool channels_last) {
  return channels_last ? images.contiguous(torch::MemoryFormat::ChannelsLast) : images;
}

}  // namespace octet
