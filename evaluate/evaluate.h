// Float vs int8 on a test set: top-1 of each, their difference, the share of
// images where both predict the same class, and the per-layer error report
// (SQNR of each layer's int8 output against the float model's).
#pragma once

#include <string>
#include <vector>

#include "data/dataset.h"
#include "graph/float_executor.h"
#include "runtime/engine.h"

namespace octet {

struct LayerReport {
  std::string name, op;
  float scale = 0, amax = 0;
  std::string method;
  double sqnr_db = 0;  // 10 log10(sum x^2 / sum (x - (q - zero_point) / scale)^2)
  int32_t zero_point = 0;  // the stored value of a real 0 (graph/node_quant.h)
  int32_t bits = 8;        // the stored bits: above 8, a wide activation (NodeQuant::bits)
};

struct EvalReport {
  int64_t images = 0;
  bool labelled = true;  // false: images without labels, no top-1 (0 below; null in the JSON)
  double float_top1 = 0, int8_top1 = 0, agreement = 0;  // percent; agreement of every prediction
  int64_t predictions_per_image = 1;                     // H x W where the model returns an image of logits
  // With masks (a class per pixel): the top-1 entries are pixel accuracies, over the labelled pixels.
  int64_t labelled_pixels = 0;                     // 0: no masks, no mean IoU (null in the JSON)
  double float_mean_iou = 0, int8_mean_iou = 0;  // percent
  double float_seconds = 0, int8_seconds = 0;
  std::vector<LayerReport> layers;  // quantization points in graph order, then the logits
};

// For each node of the quantized graph, the float inference node holding the
// same value (a conv with a fused residual stands for the add after it), or -1.
std::vector<int> float_counterparts(const Graph& float_graph, const Graph& quantized_graph);

// Evaluates the first `limit` test images (0: all); `with_layers` adds the SQNR
// report. Images without labels give the agreement and SQNR only. Layers
// compare with `layer_reference` where given (an equalized model's float
// model: quant/equalize.h, equalized_reference), the logits always with
// `float_model`.
// Fails where `test` has labels and `g` returns other than one output of classes (several, or a detection head's
// rows).
void check_labels_score_one_output(const Graph& g, const Dataset& test);

EvalReport evaluate(const FloatExecutor& float_model, const Engine& engine, const Dataset& test, int64_t limit,
                    bool with_layers, int64_t batch_size = 250, const FloatExecutor* layer_reference = nullptr);

std::string eval_report_json(const EvalReport& report);
std::string eval_report_table(const EvalReport& report);

}  // namespace octet
