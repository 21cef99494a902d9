// YOLO's decodes (graph/output_view.h's YoloDecode) written as the ONNX
// steps their Detect heads export, so that the export returns what octet
// predict does.
#pragma once

#include <string>

#include "graph/graph.h"
#include "interop/qdq_writer.h"

namespace octet {

// The decode of `permuted`, a level's values as [N, A, H, W, K] (view order "ahwk"): Sigmoid, Split [2, 2, K - 4]
// over the last axis, (xy * 2 + grid) * stride, (wh * 2) ^ 2 * anchor_grid, Concat; returns its output's name.
std::string write_yolo_decode(QdqGraphWriter& w, const std::string& permuted, const OutputView& v, const ActShape& s);

// Output `out` of YOLOv8's placed parts (view order "akhw", 2 leading and 2 trailing axes merged: [N, K, H x W]) from
// their nodes' float values `value`: each box conv's DFL (Reshape to [N, 4, B, HW], Softmax over the bins, their
// expectation) and dist2bbox, each class conv's Sigmoid, each keypoint conv's decode (a pose head's), the parts of
// each row offset concatenated over the positions and those over axis 1; fails naming a part placed otherwise.
void write_yolov8_output(QdqGraphWriter& w, const Graph& graph, const std::vector<ActShape>& shapes,
                         const std::vector<std::string>& value, const ModelOutput& out);

}  // namespace octet
