#include "runtime/cpu/kernel.h"

namespace octet::cpu {

// Defined in ops/<operator>.cpp.
extern const Kernel input_vnni_kernel, input_avx2_kernel, input_kernel, conv2d_vnni, conv2d_avx2, conv2d_reference,
    conv2d_depthwise_vnni, conv2d_depthwise_avx2, conv2d_depthwise, conv2d_grouped_vnni, conv2d_grouped_avx2,
    conv2d_grouped, linear_vnni, linear_avx2, linear_reference, max_pool2d_kernel, avg_pool2d_kernel,
    global_avg_pool_kernel, add_vnni_kernel, add_avx2_kernel, add_kernel, relu_kernel, flatten_kernel,
    shortcut_a_kernel, channel_shuffle_kernel, activation_vbmi_kernel, activation_avx2_kernel, activation_kernel,
    mul_vnni_kernel, mul_avx2_kernel, mul_kernel, concat_vbmi_kernel, concat_avx2_kernel, concat_kernel,
    channel_slice_kernel, pad2d_kernel, layer_norm_vnni_kernel, layer_norm_avx2_kernel, layer_norm_kernel,
    prelu_vnni_kernel, prelu_kernel, local_response_norm_kernel, group_norm_vnni_kernel, group_norm_avx2_kernel,
    group_norm_kernel, channel_mean_kernel, channel_max_kernel, upsample_kernel, upsample_bilinear_avx2_kernel,
    upsample_bilinear_kernel, depth_to_space_kernel;

const std::vector<Kernel>& kernel_table() {
  static const std::vector<Kernel> kernels = {
      input_vnni_kernel,           input_avx2_kernel,           input_kernel,                conv2d_vnni,
      conv2d_avx2,                 conv2d_reference,            conv2d_depthwise_vnni,       conv2d_depthwise_avx2,
      conv2d_depthwise,            conv2d_grouped_vnni,         conv2d_grouped_avx2,         conv2d_grouped,
      linear_vnni,                 linear_avx2,                 linear_reference,            max_pool2d_kernel,
      avg_pool2d_kernel,           global_avg_pool_kernel,      add_vnni_kernel,             add_avx2_kernel,
      add_kernel,                  relu_kernel,                 flatten_kernel,              shortcut_a_kernel,
      channel_shuffle_kernel,      activation_vbmi_kernel,      activation_avx2_kernel,      activation_kernel,
      mul_vnni_kernel,             mul_avx2_kernel,             mul_kernel,                  concat_vbmi_kernel,
      concat_avx2_kernel,          concat_kernel,               channel_slice_kernel,        pad2d_kernel,
      layer_norm_vnni_kernel,      layer_norm_avx2_kernel,      layer_norm_kernel,           prelu_vnni_kernel,
      prelu_kernel,                local_response_norm_kernel,  group_norm_vnni_kernel,      group_norm_avx2_kernel,
      group_norm_kernel,           channel_mean_kernel,         channel_max_kernel,          upsample_kernel,
      upsample_bilinear_avx2_kernel, upsample_bilinear_kernel, depth_to_space_kernel,
  };
  return kernels;
}

}  // namespace octet::cpu
