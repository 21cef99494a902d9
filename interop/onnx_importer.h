// The ONNX importer's state and steps (interop/onnx_import.h is its entry):
// onnx_import.cpp walks the graph, follows shapes and writes the checkpoint;
// onnx_import_nodes.cpp turns each kind of ONNX node into octet nodes, those
// that only move values in onnx_import_views.cpp, channels-last values and
// the patterns of LayerNorm and GELU in onnx_import_channels_last.cpp.
#pragma once

#include <onnx/onnx_pb.h>

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "data/dataset.h"
#include "graph/graph.h"
#include "interop/onnx_import.h"
#include "interop/onnx_shape_values.h"

namespace octet::onnx_import {

// Whether `dims` (a Reshape's target) is a view of one sample's `features` keeping the batch first: [N (or 0, -1, the
// file's batch), features...], the last possibly -1 (onnx_import_output_views.cpp).
bool batch_first_view(const std::vector<int64_t>& dims, const std::vector<int64_t>& features, int64_t file_batch);

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string where, const OnnxImportOptions& options)
      : model_(model), g_(model.graph()), where_(std::move(where)), options_(options),
        info_(options.dataset.empty() ? nullptr : &dataset_info(options.dataset)) {}

  Checkpoint run(OnnxImportSummary* summary);

 private:
  [[noreturn]] void refuse(const onnx::NodeProto& n, const std::string& why) const {
    fail(where_ + ": node '" + n.name() + "' (" + n.op_type() + ", opset " + std::to_string(summary_.opset) + "): " +
         why);
  }
  void read_opset();
  // A node's input and output counts, from ONNX's schema of its op at the model's opset.
  struct Arity {
    bool known = false;  // an ONNX op
    int min_in = 0, max_in = 0, min_out = 0, max_out = 0;
    bool fits(const onnx::NodeProto& n) const;
  };
  Arity arity_of(const onnx::NodeProto& n) const;
  void check_arity(const onnx::NodeProto& n);
  void read_input();
  void import_node(const onnx::NodeProto& n);
  void import_op(const onnx::NodeProto& n);
  bool is_shape_arithmetic(const onnx::NodeProto& n) const;
  void shape_node(const onnx::NodeProto& n);
  const ShapeValue* shape_value(const onnx::NodeProto& n, int i) const;
  bool is_flat(int node) const;
  void transpose(const onnx::NodeProto& n);
  void reduce_image(const onnx::NodeProto& n, const std::vector<int64_t>& image_axes);
  std::vector<int64_t> reduce_axes(const onnx::NodeProto& n);
  std::optional<std::vector<int64_t>> axes_of(const onnx::NodeProto& n, int64_t rank);
  const ShapeValue* ints_ahead(const std::string& name);
  void gather(const onnx::NodeProto& n);
  void squeeze(const onnx::NodeProto& n);
  void slice(const onnx::NodeProto& n);
  void expand(const onnx::NodeProto& n);
  // The octet node holding input i (a pending affine materialised first:
  // apply_pending); value_node the same without, for its shape.
  int activation(const onnx::NodeProto& n, int i);
  int value_node(const onnx::NodeProto& n, int i) const;
  // Zeros added to height and width, per side, in ONNX's pads order: top, left, bottom, right.
  using Pads = std::array<int64_t, 4>;
  Pads spatial_pads(const onnx::NodeProto& n) const;
  // extent_h, extent_w: the dilated kernel's height and width
  Pads window_pads(const onnx::NodeProto& n, int64_t extent_h, int64_t extent_w, int64_t stride_h,
                   int64_t stride_w) const;
  struct PaddedInput {
    int node;              // what the conv or pool reads
    int padding_h = 0;     // top and bottom, left to the conv or pool
    int padding_w = 0;     // left and right (a conv's: padding_h)
    bool after_pad = false;  // an ONNX Pad came before it
  };
  // A conv pads every side alike (most_h = most_w); a pool each direction apart (by_direction).
  PaddedInput padded_input(const onnx::NodeProto& n, Pads pads, int64_t most_h, int64_t most_w, bool by_direction);
  bool has_input(const onnx::NodeProto& n, int i) const { return n.input_size() > i && !n.input(i).empty(); }
  FloatTensor constant(const onnx::NodeProto& n, int i) const;
  std::string layer_name(const onnx::NodeProto& n);
  // The ONNX node's output is the octet node's value.
  void define(const onnx::NodeProto& n, int node);
  const Node& node_at(int node) const { return builder_.graph().nodes.at(static_cast<size_t>(node)); }
  int node_count() const { return static_cast<int>(builder_.graph().nodes.size()); }
  void conv(const onnx::NodeProto& n);
  void batch_norm(const onnx::NodeProto& n);
  struct BatchNormAffine {
    std::vector<double> scale, shift;  // per channel
  };
  BatchNormAffine batch_norm_affine(const onnx::NodeProto& n, int64_t channels) const;
  void batch_norm_of_rows(const onnx::NodeProto& n);
  void cast(const onnx::NodeProto& n);
  // Whether `value` is one of the model's outputs, or read only by a Cast to a
  // floating type that is (a float16 model's output cast to float32).
  bool is_model_output(const std::string& value) const;
  // Records a floating type other than float32 (the input's, a Cast's) in the summary.
  void note_computed_in_float32(int64_t type);
  void pool(const onnx::NodeProto& n);
  bool is_ceil_mode_padding(const onnx::NodeProto& n, const Pads& pads, PoolAxis rows, PoolAxis columns) const;
  void linear(const onnx::NodeProto& n);
  void add(const onnx::NodeProto& n);
  void sum(const onnx::NodeProto& n);
  int global_max_pool_of(int x);
  void local_response_norm(const onnx::NodeProto& n);
  // onnx_import_group_norm.cpp: InstanceNormalization (of an image, or of torch's GroupNorm view), GroupNormalization.
  void instance_normalization(const onnx::NodeProto& n);
  void group_normalization(const onnx::NodeProto& n);
  int group_norm_of(const onnx::NodeProto& n, int x, int64_t groups);  // epsilon: n's
  void define_normalised(const onnx::NodeProto& n, int normalised, const std::vector<float>& scale,
                         const std::vector<float>& shift);
  void subtract(const onnx::NodeProto& n);
  void difference(const onnx::NodeProto& n);  // of two computed values
  void reshape(const onnx::NodeProto& n);
  void rows_as_image(const onnx::NodeProto& n, int x, const std::vector<int64_t>& dims);
  const char* view_of(const std::string& name) const;  // value_node's refusal of a view's other readers
  void pad(const onnx::NodeProto& n);
  std::vector<int64_t> pads_over_all_axes(const onnx::NodeProto& n, const std::vector<int64_t>& given) const;
  void constant_node(const onnx::NodeProto& n);
  float scalar(const onnx::NodeProto& n, int i);
  void clip(const onnx::NodeProto& n);
  void gate(const onnx::NodeProto& n);
  void softplus(const onnx::NodeProto& n);
  void prelu(const onnx::NodeProto& n);
  void mul(const onnx::NodeProto& n);
  void concat(const onnx::NodeProto& n);
  void split(const onnx::NodeProto& n);
  // onnx_import_channels_last.cpp: channels-last views, LayerNorm, GELU and constant affines.
  // Whether n is imported here (else by import_op).
  bool dispatch_channels_last(const onnx::NodeProto& n);
  bool reads_channels_last(const onnx::NodeProto& n) const;
  // The one reader of `name`, where it is an `op` with the inputs and outputs ONNX says (a pattern
  // reads them before that node's own check) and the graph does not return `name`; else null.
  const onnx::NodeProto* sole_reader_of(const std::string& name, const char* op) const;
  // The node writing `name`, where it is an `op` with one output; else null.
  const onnx::NodeProto* writer_of(const std::string& name, const char* op) const;
  const FloatTensor* constant_ahead(const std::string& name);
  bool is_scalar(const onnx::NodeProto& n, int i, double value);  // input i: a constant of that one value
  bool transpose_view(const onnx::NodeProto& n);
  void flatten_channels_last(const onnx::NodeProto& n);
  // A Gemm's or MatMul's weight w ([out][in]) reading hwc_rows_: its columns put in C, H, W order.
  void columns_in_chw_order(const onnx::NodeProto& n, FloatTensor& w) const;
  void channel_matmul(const onnx::NodeProto& n);
  bool layer_norm_pattern(const onnx::NodeProto& mean);
  void layer_normalization(const onnx::NodeProto& n);
  void divide(const onnx::NodeProto& n);
  bool gelu_pattern(const onnx::NodeProto& div);
  // `from_end`: the constant's axis of channels counted from its last (images 3, 1-D values 2, rows and
  // channels-last values 1).
  std::vector<float> per_channel(const onnx::NodeProto& n, const FloatTensor& t, int channels, int from_end) const;
  // Input `constant` of n per channel of its computed input `value`, in that value's layout.
  std::vector<float> constant_per_channel(const onnx::NodeProto& n, int value, int constant) const;
  void constant_affine(const onnx::NodeProto& n, int i, const std::vector<float>& scale,
                       const std::vector<float>& shift);
  bool sole_reader(int node) const;
  bool fold_into_producer(int x, const std::vector<float>& scale, const std::vector<float>& shift);
  int affine_conv(const std::string& layer, int x, const std::vector<float>& scale, const std::vector<float>& shift);
  int apply_pending(const std::string& name);
  void fold_pending_into(const std::string& input, const std::string& layer);
  ActShape shape_of(int node) const;
  // The layer whose int32 accumulators return node `node`'s values: itself, or an identity one appended
  // (named after `output`, the graph output's name, where the model has several).
  int output_layer(int node, const std::vector<int>& taken, const std::string& output);
  std::vector<int> make_output_layers(std::vector<OutputView>& views);  // onnx_import_output.cpp
  void drop(const onnx::NodeProto& n);  // Identity, Dropout, a final Softmax or LogSoftmax
  Checkpoint finish();

  const onnx::ModelProto& model_;
  const onnx::GraphProto& g_;
  std::string where_;
  OnnxImportOptions options_;
  const DatasetInfo* info_;  // the --dataset the model must fit; null: the file alone says
  std::map<std::string, const onnx::TensorProto*> initializers_;
  std::map<std::string, FloatTensor> constants_;       // from Constant nodes
  std::map<std::string, const onnx::NodeProto*> constant_nodes_;  // every Constant node, by its output
  std::map<std::string, ShapeValue> shape_values_;  // integer constants and evaluated shape arithmetic
  int64_t file_batch_ = kBatchDim;
  struct PendingPad {
    int node;  // the value padded
    Pads pads;
  };
  std::map<std::string, PendingPad> pending_pads_;  // Pad outputs, taken up by the convs and pools reading them
  std::map<std::string, int> values_;                 // tensor name -> octet node holding it
  std::map<std::string, int> uses_;                   // how many node inputs read each tensor
  std::map<std::string, std::vector<const onnx::NodeProto*>> readers_;  // the nodes reading each tensor
  std::map<std::string, const onnx::NodeProto*> writers_;               // the node writing each tensor (the first)
  // Nodes taken up into an octet node made before them (the Mul of x *
  // sigmoid(x), GELU's and LayerNorm's steps), by that node.
  std::map<const onnx::NodeProto*, int> fused_nodes_;
  // Model outputs that are a conv's SiLU, x * sigmoid(x) (YOLO's mask prototypes): the conv returned, the SiLU
  // applied in float where values leave octet (DecodeKind::Silu).
  std::set<std::string> silu_outputs_;
  bool silu_output(const onnx::NodeProto& sigmoid, const onnx::NodeProto& mul, int x) const;
  // Values whose ONNX layout is [N, H, W, C] (after a Transpose of perm
  // [0, 2, 3, 1]): the octet node's own NHWC values, read as they are.
  std::set<std::string> channels_last_;
  // Values whose ONNX layout is [N, C, L] (a 1-D CNN's, from an input of rank
  // 3): octet's images of C x 1 x L, their windows 1 x K.
  std::set<std::string> one_row_;
  void read_one_row_input(const onnx::ValueInfoProto& in, const std::string& what);
  bool is_one_row(const onnx::NodeProto& n, int i) const { return has_input(n, i) && one_row_.count(n.input(i)); }
  // A conv's or pool's attribute over height and width (`fallback` where
  // absent); of a 1-D one, its one value v as {height, v}: {v, v} where
  // `alike` (a conv's stride and dilation, which a height of 1 ignores), else {1, v}.
  std::vector<int64_t> window_ints(const onnx::NodeProto& n, const char* name, std::vector<int64_t> fallback,
                                   bool alike) const;
  // onnx_import_channel_sequence.cpp: pooled channels viewed as [N, 1, C] (ECA-Net's), and the Conv along them.
  std::set<std::string> channel_sequences_;  // such values: octet rows of C features
  bool reads_channel_sequence(const onnx::NodeProto& n) const;
  bool dispatch_channel_sequence(const onnx::NodeProto& n);  // whether n is imported there (else as usual)
  void channel_conv(const onnx::NodeProto& n);
  void unsqueeze(const onnx::NodeProto& n);
  // onnx_import_split_attention.cpp: ResNeSt's split attention (splits of channels, RadixSoftmax) and SKNet's
  // selective kernel (paths stacked, a softmax over them).
  std::map<std::string, std::vector<int>> splits_;  // [N, r, C, H, W] values held as their r splits, by tensor name
  std::vector<int> splits_of(const onnx::NodeProto& n, int i);
  bool is_split_view(const std::string& name) const;
  void split_product(const onnx::NodeProto& n);
  void reduce_sum(const onnx::NodeProto& n);
  bool stack_step(const onnx::NodeProto& n);  // an Unsqueeze or Concat over axis 1 of splits (torch.stack)
  bool split_softmax(const onnx::NodeProto& n);
  // Attention values [N, rC, 1, 1] viewed as [N, cardinality, r, C/cardinality] (then transposed), by tensor name.
  struct RadixView {
    int node, cardinality, radix;
    bool transposed;
  };
  std::map<std::string, RadixView> radix_views_;
  bool radix_view(const onnx::NodeProto& n, const std::vector<int64_t>& dims);
  bool radix_softmax_step(const onnx::NodeProto& n);
  int two_split_softmax(const onnx::NodeProto& n, const RadixView& v);
  // onnx_import_space_to_depth.cpp: pixels into channels (strided slices, SpaceToDepth, PixelUnshuffle).
  // x[..., top:bottom:step_h, left:right:step_w]: a crop and a max pool of 1 x 1 windows.
  int subsample(int x, int64_t top, int64_t left, int64_t bottom, int64_t right, int64_t step_h, int64_t step_w);
  int space_to_depth(int x, int64_t block, bool offsets_innermost);  // innermost: PixelUnshuffle's order
  void space_to_depth_node(const onnx::NodeProto& n);
  bool space_to_depth_step(const onnx::NodeProto& n);
  // An image viewed as [N, C, H/b, b, W/b, b] (torch's first step of a space-to-depth), by tensor name.
  struct BlocksView {
    int node;
    int64_t block;
    bool transposed, offsets_innermost;
  };
  std::map<std::string, BlocksView> blocks_views_;
  // onnx_import_simam.cpp: SimAM's energy, d / (a sum(d) + b) of d = (x - mean)^2, as a GroupNorm and square.
  bool simam_pattern(const onnx::NodeProto& mean);  // whether the ReduceMean starts one (then imported)
  std::optional<double> scalar_ahead(const std::string& name);
  // onnx_import_resize.cpp: Resize in mode nearest, as an Upsample or a subsample.
  void resize(const onnx::NodeProto& n);
  void conv_transpose(const onnx::NodeProto& n);      // onnx_import_conv_transpose.cpp
  void depth_to_space_node(const onnx::NodeProto& n);
  bool fold_batch_norm_into_phases(const onnx::NodeProto& n, int x);
  int bilinear(const onnx::NodeProto& n, int x, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
               const std::vector<double>& scales, const std::string& transformation);
  // x with each pixel repeated down x across times: Upsamples whose factors multiply to those; -1 where either
  // has a prime factor above kMostUpsample (a broadcast of a gate or of a value per channel over an image).
  int repeated(int x, int64_t down, int64_t across);
  // onnx_import_response_norm.cpp: L2 norms (ConvNeXt-V2's GRN, F.normalize), a Div by a computed gate, powers.
  void reduce_l2(const onnx::NodeProto& n);
  void divide_by_computed(const onnx::NodeProto& n);
  // 1 / (factor x) of input i: an int8 table, its pending affine (uniform) folded in.
  int reciprocal_of(const onnx::NodeProto& n, int i, float factor);
  void power(const onnx::NodeProto& n);  // Pow of 2, 0.5, 1 or -1; Sqrt; Reciprocal
  // onnx_import_coordinate_attention.cpp: columns and rows transposed, concatenated over the height, split back;
  // gates of a column or row broadcast. Whether n is imported there (else as usual).
  bool dispatch_height_parts(const onnx::NodeProto& n);
  bool swap_height_width(const onnx::NodeProto& n);
  bool concat_columns(const onnx::NodeProto& n);
  void split_columns(const onnx::NodeProto& n);
  int broadcast_gate(const onnx::NodeProto& n, int x, int gate);
  // onnx_import_attention_pool.cpp: GCNet's attention pooling (a softmax over a mask's positions weighting
  // each channel's mean) and its fusion by adding a value per channel. Whether n is imported there.
  bool dispatch_attention_pool(const onnx::NodeProto& n);
  bool attention_pool(const onnx::NodeProto& n);  // a MatMul of an image's view by the weights
  // Whether `value` is one value per channel ([C, 1, 1]) of `image`; then spread_value is it repeated over the
  // image's pixels (refused where repeated() cannot).
  bool per_channel_of(int image, int value) const;
  int spread_value(const onnx::NodeProto& n, int image, int value);
  void spread_over_image(const onnx::NodeProto& n, int& a, int& b);  // of an Add: a value per channel of the other
  // Of a Mul of a value per channel and one per pixel (BAM's gates): whether n is one (then imported).
  bool spread_for_product(const onnx::NodeProto& n, int a, int b);
  struct PositionWeights {
    int mask;     // the octet node of the mask, C = 1
    bool column;  // unsqueezed or reshaped to [N, (1,) HW, 1]
  };
  std::map<std::string, PositionWeights> position_weights_;  // softmaxes over a mask's positions, by tensor name
  std::map<std::string, int> position_rows_;  // images viewed as [N, 1, C, HW], by tensor name: the image's node
  std::map<std::string, int> pooled_views_;   // the MatMul's [N, (1,) C, 1], by tensor name: a C x 1 x 1 node
  // ONNX values [N, C, L, 1] that are octet's nodes of C x 1 x L (or the other way), by tensor name.
  std::map<std::string, int> transposed_hw_;
  struct HeightPart {
    int node;
    bool transposed;  // the node is C x 1 x L (a row transposed), else C x L x 1
    int64_t length;
  };
  std::map<std::string, std::vector<HeightPart>> height_parts_;  // concats of columns over the height, by name
  // Rows flattened from a channels-last image (H, W, C order), by value: its shape.
  std::map<std::string, ActShape> hwc_rows_;
  // A constant x * scale + shift per channel not applied yet (values_ holds
  // x): folded into the MatMul or unpadded conv that reads it, else made a
  // depthwise 1x1 conv by the first reader that needs its values.
  struct PendingAffine {
    std::vector<float> scale, shift;
    const onnx::NodeProto* by;  // the node that made it: the depthwise conv's name
  };
  std::map<std::string, PendingAffine> pending_affines_;
  // Views of an image's channels in g groups, by tensor name: ShuffleNet's
  // channel shuffle as exported (Reshape to [N, g, C/g, H, W], Transpose(0, 2,
  // 1, 3, 4), Reshape back) and torch's GroupNorm (Reshape to [N, g, -1],
  // InstanceNormalization, Reshape back): the octet node of the image (of the
  // normalised one after the InstanceNormalization), g, and the step.
  enum class GroupedStep { Split, Transposed, Runs, NormalisedRuns };
  struct GroupedView {
    int node;
    int groups;
    GroupedStep step;
  };
  std::map<std::string, GroupedView> grouped_views_;
  // onnx_import_output_views.cpp: a detection head's outputs, its convs' values rearranged, by tensor name: each
  // conv and its view (graph/output_view.h; named after the model's output at the end).
  struct ArrangedPart {
    int node;
    OutputView view;
  };
  std::map<std::string, std::vector<ArrangedPart>> arranged_;
  bool returned_as_rows(const std::string& value, int depth = 0) const;
  bool permuted_groups(const onnx::NodeProto& n);  // whether n is imported there (else as usual)
  bool arranged_rows(const onnx::NodeProto& n);
  bool concat_arranged(const onnx::NodeProto& n);
  bool positions_view(const onnx::NodeProto& n);  // a Reshape: whether n is one (then recorded)
  bool concat_placed(const onnx::NodeProto& n, const std::vector<std::vector<ArrangedPart>>& inputs, int64_t axis);
  // [start, end) of a Slice of one axis (`axis` of a rank-`rank` value, or axis - rank), step 1, its bounds
  // constant; none for other nodes (onnx_import_views.cpp).
  std::optional<std::pair<int64_t, int64_t>> unit_slice(const onnx::NodeProto& r, int64_t axis, int64_t rank);
  // onnx_import_yolo_decode.cpp: YOLOv5's decode after a level's [N, A, H, W, K] view `permuted` (of a node of
  // shape `s`, read as `anchors` groups): the Concat that ends it, `decode` set and its steps in decoded_steps_; null
  // where no Sigmoid alone reads the view; refused, naming the step, where the rest differs from YOLOv5's.
  const onnx::NodeProto* yolo_decode(const std::string& permuted, const ActShape& s, int anchors, YoloDecode& decode);
  const onnx::NodeProto* yolo_centres(const std::string& xy, const ActShape& s, int anchors, YoloDecode& decode,
                                      std::vector<const onnx::NodeProto*>& steps);
  const onnx::NodeProto* yolo_sizes(const std::string& wh, const ActShape& s, int anchors, YoloDecode& decode,
                                    std::vector<const onnx::NodeProto*>& steps);
  const FloatTensor* other_operand(const onnx::NodeProto& n, const std::string& value);
  std::set<const onnx::NodeProto*> decoded_steps_;  // dropped: octet applies the decode where values leave it
  // onnx_import_yolov8_head.cpp: YOLOv8's Detect head. Each level's box and class convs, by the name of their
  // concat's [N, C, HW] view.
  struct Yolov8Level {
    int boxes, classes;
  };
  std::map<std::string, Yolov8Level> yolov8_levels_;
  bool yolov8_level(const onnx::NodeProto& n);  // a level's Concat: whether n is one (then recorded)
  bool yolov8_head(const onnx::NodeProto& n);   // the levels' Concat: whether n is one (then the head imported)
  const onnx::NodeProto* yolov8_dfl(const std::string& boxes, int64_t bins, int64_t positions,
                                    std::vector<const onnx::NodeProto*>& steps);
  const onnx::NodeProto* yolov8_boxes(const std::string& distances, const std::vector<Yolov8Level>& levels,
                                      const std::vector<int64_t>& first_position, std::vector<float>& strides,
                                      std::vector<const onnx::NodeProto*>& steps);
  std::vector<std::string> yolov8_sides(const std::string& distances, std::vector<const onnx::NodeProto*>& steps);
  bool yolov8_keypoints(const onnx::NodeProto& n);  // a Reshape: whether n starts a pose head's keypoint decode
  GraphBuilder builder_;
  std::set<std::string> taken_names_;
  std::map<std::string, FloatTensor> params_;
  OnnxImportSummary summary_;
};

}  // namespace octet::onnx_import
