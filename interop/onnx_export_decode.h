// YOLOv5's decode (graph/output_view.h's YoloDecode) written as the ONNX
// steps its Detect head exports, so that the export returns what octet
// predict does.
#pragma once

#include <string>

#include "graph/graph.h"
#include "interop/qdq_writer.h"

namespace octet {

// The decode of `permuted`, a level's values as [N, A, H, W, K] (view order "ahwk"): Sigmoid, Split [2, 2, K - 4]
// over the last axis, (xy * 2 + grid) * stride, (wh * 2) ^ 2 * anchor_grid, Concat; returns its output's name.
std::string write_yolo_decode(QdqGraphWriter& w, const std::string& permuted, const OutputView& v, const ActShape& s);

}  // namespace octet
