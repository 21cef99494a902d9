// A float ONNX model (as torch.onnx.export writes it, opsets 7 to 27, those before 11 converted by ONNX; its
// weights in the file or in external data beside it) as an octet float
// checkpoint: Conv (grouped, depthwise and dilated included) with the
// BatchNormalization after it folded in at its own epsilon (one of rows,
// BatchNorm1d, into the Gemm or MatMul before it); Relu, Clip, LeakyRelu,
// PRelu (a slope per channel, or one: a leaky ReLU), Sigmoid, HardSigmoid,
// HardSwish, Tanh, Elu, Softplus, Mish, Gelu, Swish (x * Sigmoid(x), x * HardSigmoid(x) and the
// steps of Mish and GELU become one activation); MaxPool and AveragePool
// (padding, ceil_mode), GlobalAveragePool and ReduceMean over height and
// width; Add and Mul of two computed values (Mul's second may be per
// channel); Add, Sub, Mul and Div of a constant per channel; Concat, Split,
// Slice and Gather of channels; the channel shuffle as exported (Reshape,
// Transpose, Reshape); ConvNeXt's channels-last blocks (LayerNorm, MatMul) and
// an N x H x W x C input read through a Transpose; Flatten, Squeeze and
// Reshape to (batch, features); Gemm and MatMul (+ Add of a bias) as linear
// layers. The integer arithmetic on shapes that exporters write is evaluated
// (interop/onnx_shape_values.h) and dropped; Identity, Cast to a floating type, Dropout,
// a Pad of zeros and a trailing Softmax pass through. Anything else is refused
// naming the node, its op type and the opset; nothing is written. Float16,
// bfloat16 and float64 models are read and computed in float32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"  // kNoDataset: the checkpoint's dataset when the import named none
#include "models/checkpoint.h"

namespace onnx {
class ModelProto;
}

namespace octet {

struct OnnxImportOptions {
  // Gives the classes and the default normalisation, and must fit the input's
  // shape; empty: none, the classes numbered from the output's size.
  std::string dataset;
  std::vector<float> mean, std;  // input normalisation; empty: the dataset's, or none (mean 0, std 1)
  // The image's height and width where the file leaves them dynamic (empty:
  // the dataset's); where the file fixes them, they must agree.
  std::vector<int> input_size;
};

struct OnnxImportSummary {
  int64_t opset = 0;
  int64_t upgraded_from_opset = 0;         // the file's opset (7 to 10), converted to `opset` by ONNX; 0: none
  int64_t onnx_nodes = 0;                  // nodes in the file
  int64_t octet_nodes = 0;                 // nodes of the imported graph
  int64_t folded_batch_norms = 0;          // BatchNormalization folded into the conv or linear layer before it
  std::vector<std::string> dropped;        // op types passed through or dropped (Identity, Dropout, Softmax, shape arithmetic)
  std::vector<int> input;                  // the image: channels, height, width
  std::vector<std::string> computed_in_float32;  // the file's other floating types ("FLOAT16"): octet's are float32
  bool sized_by_options = false;           // the file left the height or width dynamic: --input-size or the dataset's
};

// Fails naming the file and the node on anything it cannot import.
Checkpoint import_onnx(const std::string& path, const OnnxImportOptions& options, OnnxImportSummary* summary = nullptr);
// The same for a model already in memory (e.g. rewritten by a test); `where`
// names it in messages, and its last component names the checkpoint's model.
Checkpoint import_onnx_model(const onnx::ModelProto& model, const std::string& where, const OnnxImportOptions& options,
                             OnnxImportSummary* summary = nullptr);

}  // namespace octet
