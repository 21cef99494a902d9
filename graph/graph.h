// octet's graph of operations. A model (models/) is built as a Graph of
// training-time ops (conv, batch norm, ReLU, ...) whose node names are the
// prefixes of the parameter names in a checkpoint ("layer1.0.conv1" owns
// "layer1.0.conv1.weight"). fold.h turns it into the inference graph that
// calibration, quantization and the runtimes execute.
//
// Nodes are stored in topological order; the last `output_count` nodes are the
// outputs, in the model's order (a detection head's scales, a segmentation's
// auxiliary logits), and no node reads them. Most models have one: the last node.
// Activation shapes are per sample, channels x height x width (a flat vector
// of F features is F x 1 x 1).
#pragma once

#include <string>
#include <vector>

#include "graph/ops/op_list.h"
#include "graph/output_view.h"

namespace octet {

// What each operator is and does: graph/op.h and graph/ops/<name>.cpp.
enum class Op {
#define OCTET_OP_ENUMERATOR(enumerator, name) enumerator,
  OCTET_OPS(OCTET_OP_ENUMERATOR)
#undef OCTET_OP_ENUMERATOR
};

const char* op_name(Op op);
Op op_from_name(const std::string& name);

struct ActShape {
  int c = 0, h = 0, w = 0;
  long numel() const { return static_cast<long>(c) * h * w; }
  bool operator==(const ActShape& o) const { return c == o.c && h == o.h && w == o.w; }
};

std::string to_string(const ActShape& s);

// The shape of a batch of a model's output `out` (its logits): [N][classes] for
// a vector; [N][H][W][classes] for an image of them (a segmentation's scores per
// pixel), as the runtime stores activations, so a row of `classes` values is
// always one prediction.
std::vector<int64_t> logits_shape(const ActShape& out, int64_t batch);

struct Node {
  std::string name;
  Op op = Op::Input;
  // Producers. A quantized graph's conv or linear may have a second input: a
  // residual added to its output before the (fused) ReLU.
  std::vector<int> inputs;
  // Conv2d: output channels; Linear: output features; ShortcutA: zero
  // channels added on each side; Input: channels of the input image;
  // ChannelSlice: channels it keeps.
  int channels = 0;
  int kernel = 0, stride = 1, padding = 0;  // Conv2d, MaxPool2d, AvgPool2d (the window's height, its rows)
                                            // Upsample: stride, times each pixel is repeated down
  int kernel_w = 0;                         // Conv2d, pools: the window's width where not its height (1x7)
  int stride_w = 0, padding_w = -1;         // pools: the step and padding across where not those down (0, -1)
                                            // Upsample: stride_w, times repeated across where not down
  int groups = 1;  // Conv2d: channel groups (as many as input channels: depthwise); GroupNorm: groups normalised
  int dilation = 1;                         // Conv2d: pixels from one tap to the next (1: adjacent)
  bool ceil_mode = false;                   // pools: the output size rounded up (a last, partial window)
  bool exclude_padding = false;             // AvgPool2d: padded values not counted (ONNX count_include_pad 0)
  bool align_corners = false;               // UpsampleBilinear: corner pixels aligned, not pixel centres
  int offset = 0;                           // ChannelSlice: its first channel
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;  // Pad2d: zero rows and columns on each side
                                                                  // (negative: as many removed)
  std::string function;                     // Activation: which one (graph/ops/activation.h)
  float alpha = 0, beta = 0;                // Activation: its parameters; LocalResponseNorm: its alpha and beta
  float epsilon = 0;  // LayerNorm, GroupNorm: added to the variance; LocalResponseNorm: its bias
  bool bias = false;                        // Conv2d, Linear; GroupNorm: its affine (".weight", ".bias")
  bool relu = false;                        // ReLU fused into this op (inference graphs)
  float relu_max = 0;                       // with relu: its upper bound where a Clip(0, max) was fused (ReLU6); 0: none
  int height = 0, width = 0;                // Input; Upsample(Bilinear): its output size, where no whole factors
  OutputView view;                          // an output node: its part in a model output (graph/output_view.h)
};

// A conv's or pool's kernel width (its window is kernel x kernel_width).
inline int kernel_width(const Node& n) { return n.kernel_w ? n.kernel_w : n.kernel; }

// One direction of a pool's window: its length, its step and the padding at either end.
struct PoolAxis {
  int kernel = 1, stride = 1, padding = 0;
};
inline PoolAxis pool_rows(const Node& n) { return {n.kernel, n.stride, n.padding}; }
inline PoolAxis pool_columns(const Node& n) {
  return {kernel_width(n), n.stride_w ? n.stride_w : n.stride, n.padding_w >= 0 ? n.padding_w : n.padding};
}
// Sets a pool's window and ceil_mode.
void set_pool_window(Node& n, PoolAxis rows, PoolAxis columns, bool ceil_mode);
// Whether a conv's kernel is not square (the kernels that can_implement only square ones refuse it).
inline bool rectangular_kernel(const Node& n) { return kernel_width(n) != n.kernel; }

// An Upsample's repeats across, and the most it takes each way (a whole network's worth: HRNet's 8).
inline int upsample_across(const Node& n) { return n.stride_w ? n.stride_w : n.stride; }
constexpr int kMostUpsample = 64;

// A conv with one output channel per input channel (groups == channels),
// reading `in_channels` channels.
inline bool is_depthwise(const Node& n, int in_channels) {
  return n.op == Op::Conv2d && n.groups > 1 && n.groups == in_channels && n.channels == n.groups;
}

class Graph {
 public:
  std::vector<Node> nodes;
  int output_count = 1;

  int output() const { return static_cast<int>(nodes.size()) - 1; }  // the last output
  int first_output() const { return static_cast<int>(nodes.size()) - output_count; }
  bool is_output(int node) const { return node >= first_output(); }
  std::vector<int> outputs() const;
  // Reorders the nodes so that `outputs`, none read by another node, are the
  // last ones, in this order, and sets output_count; fails naming a node another reads.
  void place_outputs_last(const std::vector<int>& outputs);
  // Output shape of every node; fails on inconsistent attributes.
  std::vector<ActShape> shapes() const;
  // Consumers of each node (indices), in order.
  std::vector<std::vector<int>> consumers() const;
  // Per node, the last node that reads it (-1 if none): when its value can be freed.
  std::vector<int> last_readers() const;
  int find(const std::string& name) const;  // -1 if absent

  // Parameter names (and their shapes) that this graph's ops own, in node order:
  // ".weight"/".bias" of convs and linears, BN's weight, bias, running_mean, running_var.
  struct Param {
    std::string name;
    std::vector<long> shape;
    bool trainable;
  };
  std::vector<Param> params() const;

  std::string to_json() const;
  static Graph from_json(const std::string& text);
  // Checks node references, arities and shapes; fails with a message naming the node.
  void validate() const;
};

// Builds a graph node by node; each call returns the new node's index.
class GraphBuilder {
 public:
  int input(int channels, int height, int width);
  int conv(const std::string& name, int x, int out_channels, int kernel, int stride, int padding, bool bias,
           int groups = 1, int dilation = 1);
  // A conv whose kernel is kernel_h x kernel_w (Inception's 1x7 and 7x1; a depthwise Conv1d's 1 x k), as conv()
  // otherwise.
  int conv_rect(const std::string& name, int x, int out_channels, int kernel_h, int kernel_w, int stride, int padding,
                bool bias, int groups = 1, int dilation = 1);
  int batch_norm(const std::string& name, int x);
  // A bias-free conv followed by a batch norm when `with_bn` (ResNet style).
  int conv_bn(const std::string& conv_name, const std::string& bn_name, int x, int out_channels, int kernel,
              int stride, int padding, bool with_bn);
  int linear(const std::string& name, int x, int out_features, bool bias = true);
  int relu(int x);
  int max_pool(int x, int kernel, int stride, int padding = 0, bool ceil_mode = false);
  int avg_pool(int x, int kernel, int stride, int padding = 0, bool ceil_mode = false, bool exclude_padding = false);
  // Pools whose window differs down and across (a 3x1 window, strides 2 and 1, a global pool of a 7x10 image).
  int max_pool(int x, PoolAxis rows, PoolAxis columns, bool ceil_mode);
  int avg_pool(int x, PoolAxis rows, PoolAxis columns, bool ceil_mode, bool exclude_padding);
  int activation(int x, const std::string& function, float alpha = 0, float beta = 0);
  // b: the same shape as a, one value per channel (C x 1 x 1) or one per pixel (1 x H x W)
  int mul(int a, int b);
  int concat(std::vector<int> inputs);  // on channels
  int channel_slice(int x, int offset, int channels);
  int channel_shuffle(int x, int groups);
  int global_avg_pool(int x);
  int channel_mean(int x);  // of each pixel's channels: 1 x H x W
  int channel_max(int x);
  int add(int a, int b);
  int flatten(int x);
  int shortcut_a(int x, int pad_channels);
  int pad(int x, int top, int left, int bottom, int right);  // zeros; a negative side crops
  int upsample(int x, int down, int across);  // each pixel repeated down x across times (nearest)
  int resize_nearest(int x, int height, int width);  // nearest to a size (graph/ops/upsample.h)
  // Bilinear by whole factors, pixel centres aligned (F.interpolate's align_corners=False) or corners.
  int upsample_bilinear(int x, int down, int across, bool align_corners = false);
  // Bilinear to a size of height x width (LRASPP's 33 -> 65 pixels).
  int resize_bilinear(int x, int height, int width, bool align_corners);
  int depth_to_space(int x, int block);  // channels spread over block x block pixels (pixel_shuffle)
  int layer_norm(int x, float epsilon);  // over each pixel's channels
  // Over each of `groups` runs of channels, all pixels of a sample (groups = channels: InstanceNorm); with
  // `affine`, a scale and shift per channel after it: the parameters "<name>.weight" and "<name>.bias".
  int group_norm(const std::string& name, int x, int groups, float epsilon, bool affine);
  // ONNX's LRN: x / (bias + alpha / size x the sum of squares of `size` channels about x)^beta.
  int local_response_norm(int x, int size, float alpha, float beta, float bias);
  int prelu(const std::string& name, int x);  // a slope per channel: the parameter "<name>.weight"
  Graph finish();
  const Graph& graph() const { return graph_; }  // as built so far

 private:
  // Appends a node; an empty name becomes "<op>_<index>".
  Node& push(Op op, std::string name, std::vector<int> inputs);
  int last() const;
  Graph graph_;
};

}  // namespace octet
