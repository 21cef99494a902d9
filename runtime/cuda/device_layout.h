// How the CUDA runtime lays a quantized model out in device memory, as plain
// C++ (no CUDA), so that it can be checked on any machine:
//  - every activation is NHWC bytes (stored_value.h: int8, uint8, or a wide
//    value's two planes) with its channels padded with zeros to a
//    multiple of the backend's channel alignment: 4 for cuda-dp4a and
//    cuda-cublaslt (a pixel's channels start on a 4-byte boundary, a dp4a
//    word never straddles two pixels), 16 for cuda-imma (a 16-byte cp.async
//    never does);
//  - a flatten is its input's bytes read as one vector (no copy);
//  - conv and linear weights are packed once into [out_c][K], K tap-major
//    over a chosen number of channels per tap and padded with zeros to a
//    multiple the kernel wants, out_c padded too, with requantization
//    parameters that make every padding channel come out 0 (grouped and
//    dilated convs: [K][out_c], conv2d_grouped_kernel.h);
//  - one arena per batch size holds every value; a value's buffer is reused
//    once no later node reads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/ops/local_response_norm.h"
#include "qmodel/quantized_model.h"
#include "runtime/cuda/conv2d_grouped_kernel.h"
#include "runtime/cuda/folded_input.h"
#include "runtime/cuda/stream_schedule.h"

namespace octet::cuda {

constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
constexpr int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
// Channels as stored on the device by a backend aligning them to `alignment`.
constexpr int padded_channels(int channels, int alignment) { return static_cast<int>(round_up(channels, alignment)); }
constexpr int kDp4aChannelAlignment = 4;  // cuda-dp4a, cuda-cublaslt
// Alignment of every buffer placed in an arena (cuBLASLt wants 16 bytes).
constexpr int64_t kBufferAlignment = 256;

// How one value is stored per sample: `pixels` positions of `padded_c`
// bytes, the first `c` of them real channels, the rest zeros; or, for
// cuda-imma's input, an image folded as `fold` says (folded_input.h). A wide
// value has two such planes (stored_value.h), each a whole batch's.
struct Storage {
  int64_t pixels = 0;
  int c = 0, padded_c = 0;
  ImageFold fold;
  int planes = 1;
  int64_t plane_bytes() const { return pixels * padded_c; }
  int64_t bytes() const { return planes * plane_bytes(); }
  bool operator==(const Storage& o) const {
    return pixels == o.pixels && c == o.c && padded_c == o.padded_c && fold.kind == o.fold.kind && planes == o.planes;
  }
};

// The storage of every value of a graph (all nodes but the output); with
// cuda-imma's channel alignment, the input folded where image_fold says.
struct ValueLayout {
  int channel_alignment = kDp4aChannelAlignment;
  std::vector<Storage> storage;  // per node; the output node's is empty
  std::vector<int> owner;        // node whose buffer holds the value: itself, or for a flatten its input's owner
  // Per node: for a conv or linear, the Activation or PRelu that its epilogue
  // computes too, writing that node's value (RequantEpilogue::table), or -1.
  // Fused where the activation is the layer's only reader, both are 8-bit
  // values stored alike, and not every value is retained (plan_arena): the
  // layer's own value is then never stored.
  std::vector<int> fused_activation;

  // The owner of the buffer that the node's launch writes (not with every
  // value retained): its fused activation's, else its own.
  int written_owner(int node) const {
    const int activation = fused_activation.empty() ? -1 : fused_activation[node];
    return activation >= 0 ? activation : owner[node];
  }
};

// Fails naming the node (prefixed with `who`) where a consumer cannot read
// its input's storage (an image op on a flattened value, an add of values
// stored differently).
ValueLayout plan_values(const Graph& g, const std::vector<ActShape>& shapes, const std::string& who,
                        int channel_alignment);
// The same for a quantized model, whose wide values (NodeQuant::bits > 8)
// take two planes, with its fused activations.
ValueLayout plan_model_values(const QuantizedModel& m, const std::vector<ActShape>& shapes, const std::string& who,
                              int channel_alignment);

// A conv as its kernel runs it over its input's storage: the conv itself, or
// over a folded input the conv folded_input.h describes.
struct ConvGeometry {
  int in_h = 0, in_w = 0, kernel = 1, stride = 1, padding = 0;
};
ConvGeometry conv_geometry(const Graph& g, const std::vector<ActShape>& shapes, const ValueLayout& values, int node);

// How a kernel reads a layer's K: each tap (kernel position; for a linear,
// each stored pixel of its input) holds `tap_channels` bytes, the input's
// real channels then zeros (0: all the stored channels), and K is padded
// with zeros to a multiple of `depth_multiple`.
struct WeightPacking {
  int tap_channels = 0;
  int64_t depth_multiple = 4;
};

// Rows [out_c][taps * in_c] (NHWC reading order) as [padded_out_c][depth]
// with `tap_channels` bytes per tap and zeros everywhere else.
std::vector<int8_t> pack_weight_rows(const int8_t* rows, int out_c, int64_t taps, int in_c, int padded_out_c,
                                     int tap_channels, int64_t depth);

// A conv's or linear's weights and requantization parameters in device
// layout. Every array has out_c entries; padding channels have bias 0,
// multiplier 0, skip multiplier 0 and shift 1, which requantize to 0.
struct PackedLayer {
  int out_c = 0;                                                  // output channels, padded
  int tap_channels = 0;                                           // bytes of each tap in K
  int64_t depth = 0;                                              // K: taps x tap_channels, padded as asked
  std::vector<int8_t> weights;                                    // [out_c][depth], zeros in the padding
  std::vector<int32_t> bias, multiplier, shift, skip_multiplier;  // requantization ones empty for the output node
};
// Over a folded input: the folded conv's taps and bytes per tap (`packing`'s
// tap channels aside).
PackedLayer pack_layer(const QuantizedModel& model, const std::vector<ActShape>& shapes, const ValueLayout& values,
                       int node, const WeightPacking& packing = {});

// Convolutions that no implicit GEMM runs (grouped, depthwise, dilated, or of a
// non-square kernel such as Inception's 1x7): conv2d_grouped_kernel.h runs them,
// on every backend.
inline bool runs_grouped_kernel(const Node& n) {
  return n.op == Op::Conv2d && (n.groups != 1 || n.dilation != 1 || rectangular_kernel(n));
}
GroupedConvShape grouped_conv_shape(const Graph& g, const std::vector<ActShape>& shapes, const ValueLayout& values,
                                    int node, int64_t batch);
// Such a conv's weights as grouped_weight_offset lays them out (depth: taps
// x input channels per group; tap_channels: the latter).
PackedLayer pack_grouped_layer(const QuantizedModel& model, const std::vector<ActShape>& shapes,
                               const ValueLayout& values, int node);

// An Activation's 256-entry table, or a PRelu's one per channel, as the CUDA
// kernels read them (channel_ops_kernel.h stored_activation_table), from the
// model's scales as the CPU runtime makes its own.
std::vector<int8_t> stored_tables(const QuantizedModel& model, int node);
// A local response norm's int8 operands (graph/ops/local_response_norm.h) from its and its input's scales.
ops::LocalResponseLevels local_response_levels(const QuantizedModel& model, int node);
// A group norm's affine as its kernel reads it (channel_ops_kernel.h GroupNormOperands::affine): each channel's
// ops::GroupNormChannel scale, then each one's shift.
std::vector<double> group_norm_affine(const QuantizedModel& model, int node);
// Points `e` (a conv's or linear's epilogue) at its fused activation's
// stored tables, `tables` (ValueLayout::fused_activation).
void add_fused_tables(RequantEpilogue& e, const QuantizedModel& model, const std::vector<ActShape>& shapes,
                      int activation, const int8_t* tables);

// Arena offsets for one batch size: value v (an owner) lives from node v (a
// fused activation's: from its layer's, which writes it; that layer's own
// value has none) to the last node reading it, or to the end with retain_all
// (then nothing is fused), and takes the lowest kBufferAlignment-aligned
// offset free of every value alive with it. A node run beside the main stream
// (`streams`; none with retain_all) writes its value from its fork on, and
// reads its inputs until its join: they live that long.
struct ArenaPlan {
  std::vector<int64_t> offset;  // per owner node, -1 for the others
  std::vector<int> last_use;    // per owner node: the last node during which it must stay intact
  int64_t bytes = 0;
};
ArenaPlan plan_arena(const Graph& g, const ValueLayout& values, int64_t batch, bool retain_all,
                     const StreamSchedule& streams);

// The values of one node in the CPU runtime's layout and bytes (NHWC without
// channel padding, unfolded, q rather than q - zero_point) from its device
// bytes (`batch` samples, stored as stored_value.h says).
std::vector<int8_t> strip_padding(const std::vector<int8_t>& stored, const Storage& s, int64_t batch,
                                  int32_t zero_point);
// The same for a wide value: its two planes' bytes as int16 values.
std::vector<int16_t> strip_wide_padding(const std::vector<int8_t>& stored, const Storage& s, int64_t batch);

}  // namespace octet::cuda
