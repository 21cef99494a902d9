// ONNX's external data: tensors whose bytes lie in a file beside the model,
// as torch.onnx.export writes them by default from PyTorch 2.9 (model.onnx
// and model.onnx.data) and onnx.save(..., save_as_external_data=True) does.
#pragma once

#include <string>

namespace onnx {
class ModelProto;
}

namespace octet::onnx_import {

// Reads the external data of `model` (loaded from `model_path`) into its
// tensors, which then hold their bytes themselves. A location must name a
// file in the model's own folder or below it (relative, no ".."), as ONNX's
// checker requires, and its offset and length must lie within that file;
// fails naming the model, the tensor and the file otherwise.
void read_external_data(onnx::ModelProto& model, const std::string& model_path);

}  // namespace octet::onnx_import
