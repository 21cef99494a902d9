// The importer's image input: the graph's one input that is no weight, its
// type, its layout (N x C x H x W, or N x H x W x C read through a Transpose)
// and its size (the file's, or --input-size's or the dataset's where the file
// leaves height and width dynamic).
#include <algorithm>

#include "common/error.h"
#include "data/dataset.h"
#include "interop/onnx_importer.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

// A 1-D CNN's input, N x C x L (audio, sensor, ECG): octet's images of C x 1 x L, whose every value keeps
// that view (one_row_). Its channels and length are fixed.
void Importer::read_one_row_input(const onnx::ValueInfoProto& in, const std::string& what) {
  const auto& dims = in.type().tensor_type().shape().dim();
  int cl[2];
  for (int k = 1; k < 3; ++k) {
    const std::string dim =
        what + ": its " + (k == 1 ? "channels" : "length") + " (dimension " + std::to_string(k) + ")";
    check(dims[k].has_dim_value(), dim + " is dynamic; octet needs a fixed one (export with a fixed-size input)");
    const int64_t value = dims[k].dim_value();
    check(value > 0 && value < (1 << 16), dim + " is " + std::to_string(value) + ", not 1 to 65535");
    cl[k - 1] = static_cast<int>(value);
  }
  check(options_.input_size.empty(), where_ + ": --input-size sizes images; input '" + in.name() +
                                         "' is N x C x L, with a fixed length");
  summary_.input = {cl[0], 1, cl[1]};
  if (info_)
    check(cl[0] == info_->channels && info_->height == 1 && cl[1] == info_->width,
          what + " takes " + std::to_string(cl[0]) + " x " + std::to_string(cl[1]) + " values (N x C x L), and " +
              info_->name + "'s images are " + std::to_string(info_->channels) + "x" + std::to_string(info_->height) +
              "x" + std::to_string(info_->width) + " (--dataset)");
  values_[in.name()] = builder_.input(cl[0], 1, cl[1]);
  one_row_.insert(in.name());
}

void Importer::read_input() {
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& in : g_.input())
    if (!initializers_.count(in.name())) inputs.push_back(&in);
  check(inputs.size() == 1, where_ + ": the graph has " + std::to_string(inputs.size()) +
                                " inputs besides its weights; octet imports models of one image input");
  const onnx::ValueInfoProto& in = *inputs[0];
  const std::string what = where_ + ": input '" + in.name() + "'";
  check(in.type().has_tensor_type() && is_float_type(in.type().tensor_type().elem_type()),
        what + " is not a floating-point tensor (float32, float16, bfloat16 or float64)");
  note_computed_in_float32(in.type().tensor_type().elem_type());
  const auto& dims = in.type().tensor_type().shape().dim();
  check(dims.size() == 4 || dims.size() == 3,
        what + " has " + std::to_string(dims.size()) + " dimensions, not N x C x H x W (or N x C x L)");
  if (dims[0].has_dim_value()) file_batch_ = dims[0].dim_value();
  if (dims.size() == 3) return read_one_row_input(in, what);
  // An input whose every reader moves its channels to axis 1 (a Transpose of
  // perm [0, 3, 1, 2]: TensorFlow's and Keras's N x H x W x C models, as
  // tf2onnx writes them) is the channels-last view of an octet image.
  const auto& readers = readers_[in.name()];
  const bool nhwc = !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](const onnx::NodeProto* r) {
    return r->op_type() == "Transpose" && r->input(0) == in.name() &&
           ints_attribute(*r, "perm", {}) == std::vector<int64_t>{0, 3, 1, 2};
  });
  // A dynamic height or width takes --input-size's, else the dataset's;
  // channels must be fixed (every conv's weights fix them anyway).
  const std::vector<int>& size = options_.input_size;
  check(size.empty() || (size.size() == 2 && size[0] > 0 && size[0] < (1 << 16) && size[1] > 0 && size[1] < (1 << 16)),
        where_ + ": --input-size (input_size in Python) must be a height and width of 1 to 65535");
  int chw[3];
  for (int k = 1; k < 4; ++k) {
    const int role = nhwc ? k % 3 : k - 1;  // 0: channels, 1: height, 2: width
    const char* role_name = role == 0 ? "channels" : role == 1 ? "height" : "width";
    const std::string dim = what + ": its " + role_name + " (dimension " + std::to_string(k) + ")";
    int64_t wanted = 0;  // the options' height or width; 0: none
    if (role > 0) wanted = !size.empty() ? size[role - 1] : info_ ? (role == 1 ? info_->height : info_->width) : 0;
    if (dims[k].has_dim_value()) {
      const int64_t value = dims[k].dim_value();
      check(value > 0 && value < (1 << 16), dim + " is " + std::to_string(value) + ", not 1 to 65535");
      check(role == 0 || size.empty() || value == wanted, dim + " is " + std::to_string(value) +
                                                               " in the file, and --input-size says " +
                                                               std::to_string(wanted));
      chw[role] = static_cast<int>(value);
      continue;
    }
    const std::string param = dims[k].dim_param().empty() ? "" : " ('" + dims[k].dim_param() + "')";
    check(role > 0, dim + " is dynamic" + param + "; octet needs fixed channels (export with a fixed-size input)");
    check(wanted > 0, dim + " is dynamic" + param +
                          "; give the image size as --input-size H W (input_size=(H, W) in Python) or a dataset, "
                          "or export with a fixed-size dummy input");
    chw[role] = static_cast<int>(wanted);
    summary_.sized_by_options = true;
  }
  summary_.input = {chw[0], chw[1], chw[2]};
  if (info_)
    check(chw[0] == info_->channels && chw[1] == info_->height && chw[2] == info_->width,
          what + " takes " + std::to_string(chw[0]) + "x" + std::to_string(chw[1]) + "x" + std::to_string(chw[2]) +
              " images, and " + info_->name + "'s are " + std::to_string(info_->channels) + "x" +
              std::to_string(info_->height) + "x" + std::to_string(info_->width) + " (--dataset)");
  values_[in.name()] = builder_.input(chw[0], chw[1], chw[2]);
  if (nhwc) channels_last_.insert(in.name());
}

}  // namespace octet::onnx_import
