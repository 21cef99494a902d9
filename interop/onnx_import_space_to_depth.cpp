// The ONNX importer's rearrangements of pixels into channels: a Slice of
// height and width with a step (YOLOv5's Focus takes x[..., ::2, ::2] and its
// three neighbours), ONNX's SpaceToDepth, and the Reshape, Transpose, Reshape
// that torch writes for nn.PixelUnshuffle and TResNet's SpaceToDepth stem.
// Each is made of octet's own moves, exact in int8: a crop (Pad2d of negative
// sides) and a max pool of 1 x 1 windows striding the step keep every step-th
// pixel, a Concat of the b x b offsets puts them in channels, and a channel
// shuffle orders them as PixelUnshuffle does.
#include "interop/onnx_importer.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

namespace {
// Transposes of [N, C, H/b, b, W/b, b]: PixelUnshuffle's (channel c * b^2 + offset) and
// SpaceToDepth's (channel offset * C + c), the offset dy * b + dx.
const std::vector<int64_t> kOffsetsInnermost = {0, 1, 3, 5, 2, 4}, kOffsetsOutermost = {0, 3, 5, 1, 2, 4};
}  // namespace

int Importer::subsample(int x, int64_t top, int64_t left, int64_t bottom, int64_t right, int64_t step_h,
                        int64_t step_w) {
  const ActShape s = shape_of(x);
  const bool crops = top != 0 || left != 0 || bottom != s.h || right != s.w;
  const int cropped = crops ? builder_.pad(x, static_cast<int>(-top), static_cast<int>(-left),
                                           static_cast<int>(bottom - s.h), static_cast<int>(right - s.w))
                            : x;
  if (step_h == 1 && step_w == 1) return cropped;
  return builder_.max_pool(cropped, PoolAxis{1, static_cast<int>(step_h), 0}, PoolAxis{1, static_cast<int>(step_w), 0},
                           false);
}

int Importer::space_to_depth(int x, int64_t block, bool offsets_innermost) {
  const ActShape s = shape_of(x);
  std::vector<int> offsets;
  for (int64_t dy = 0; dy < block; ++dy)
    for (int64_t dx = 0; dx < block; ++dx) offsets.push_back(subsample(x, dy, dx, s.h, s.w, block, block));
  const int y = builder_.concat(offsets);
  return offsets_innermost ? builder_.channel_shuffle(y, static_cast<int>(block * block)) : y;
}

void Importer::space_to_depth_node(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const ActShape s = shape_of(x);
  const int64_t block = int_attribute(n, "blocksize", 0);
  if (is_flat(x) || block < 2 || block > 16 || s.h % block != 0 || s.w % block != 0)
    refuse(n, "blocksize " + std::to_string(block) + " of images " + to_string(s) +
                  ": octet takes 2 to 16, dividing height and width");
  define(n, space_to_depth(x, block, false));
}

// Whether n is a step of a space-to-depth as torch writes it (then imported here).
bool Importer::space_to_depth_step(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  const auto view = blocks_views_.find(n.input(0));
  if (op == "Transpose" && view != blocks_views_.end()) {
    const std::vector<int64_t> perm = ints_attribute(n, "perm", {});
    if (view->second.transposed || (perm != kOffsetsInnermost && perm != kOffsetsOutermost))
      refuse(n, "a transpose of [N, C, H/b, b, W/b, b] other than PixelUnshuffle's (perm [0,1,3,5,2,4]) or "
                "SpaceToDepth's ([0,3,5,1,2,4])");
    blocks_views_[n.output(0)] = {view->second.node, view->second.block, true, perm == kOffsetsInnermost};
    return true;
  }
  if (op != "Reshape") return false;
  const ShapeValue* target = shape_value(n, 1);
  if (!target && view != blocks_views_.end()) refuse(n, "a target shape octet cannot evaluate");
  if (!target) return false;  // reshape() refuses it
  const std::vector<int64_t>& dims = target->values;
  const bool batch_first = !dims.empty() && (dims[0] == kBatchDim || dims[0] == -1 || dims[0] == file_batch_);
  if (view != blocks_views_.end()) {
    const BlocksView v = view->second;
    const ActShape s = shape_of(v.node);
    const int64_t b = v.block;
    const bool back = v.transposed && batch_first && dims.size() == 4 &&
                      (dims[1] == s.c * b * b || dims[1] == -1) && dims[2] == s.h / b && dims[3] == s.w / b;
    if (!back)
      refuse(n, "a reshape of [N, C, H/b, b, W/b, b] other than to [N, C b^2, H/b, W/b] after its transpose");
    define(n, space_to_depth(v.node, b, v.offsets_innermost));
    return true;
  }
  const auto in = values_.find(n.input(0));
  if (dims.size() != 6 || in == values_.end() || is_flat(in->second) || is_one_row(n, 0) ||
      channels_last_.count(n.input(0)))
    return false;
  const int x = activation(n, 0);
  const ActShape s = shape_of(x);
  const int64_t b = dims[3];
  if (!batch_first || dims[1] != s.c || b < 2 || b > 16 || dims[5] != b || dims[2] * b != s.h || dims[4] * b != s.w)
    refuse(n, "a reshape to " + shape_value_string(*target) + " of images " + to_string(s) +
                  ": octet reshapes to 6 dimensions only as [N, C, H/b, b, W/b, b], b from 2 to 16 (PixelUnshuffle, "
                  "SpaceToDepth)");
  blocks_views_[n.output(0)] = {x, b, false, false};
  return true;
}

}  // namespace octet::onnx_import
