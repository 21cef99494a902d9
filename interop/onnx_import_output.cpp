// The importer's last step before the checkpoint: the layer whose int32
// accumulators the runtime returns as the logits (qmodel/quantized_model.h).
// A vector of logits ends in a linear layer, an image of them (a segmentation's
// scores per pixel) in a dense conv; where the model's last node is neither
// (or has a ReLU), an identity layer is appended.
#include "interop/onnx_importer.h"

namespace octet::onnx_import {

void Importer::end_in_an_output_layer() {
  const int last = node_count() - 1;
  const Node& n = builder_.graph().nodes.at(static_cast<size_t>(last));
  const ActShape s = shape_of(last);
  const bool image = s.h != 1 || s.w != 1;
  if (image ? n.op == Op::Conv2d && n.groups == 1 : n.op == Op::Linear) {
    if (!n.relu && n.inputs.size() == 1) return;
  }
  std::string name = "identity_logits";  // a layer whose int32 accumulators are the logits
  while (taken_names_.count(name)) name += "_";
  taken_names_.insert(name);
  FloatTensor identity({s.c, s.c}, 0.0f);
  for (int k = 0; k < s.c; ++k) identity.data[static_cast<size_t>(k) * s.c + k] = 1.0f;
  if (image) {
    builder_.conv(name, last, s.c, 1, 1, 0, true);
    identity.shape = {s.c, s.c, 1, 1};
  } else {
    builder_.linear(name, is_flat(last) ? last : builder_.flatten(last), s.c, true);
  }
  params_[name + ".weight"] = std::move(identity);
  params_[name + ".bias"] = FloatTensor({s.c}, 0.0f);
}

}  // namespace octet::onnx_import
