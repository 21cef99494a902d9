// Writes the seed corpora of the model-file fuzz targets: real files written
// by octet's own savers, but of tiny networks (a few hundred parameters) so
// the fuzzer spends its time on the parsers, not on copying megabytes.
//   make_seeds CORPUS_DIR   writes CORPUS_DIR/{checkpoint,quantized,safetensors}/*
// Together the two networks use every inference operator; one quantized file
// keeps two nodes in float, one has a wide (16-bit) activation, one returns an
// image of logits.
#include <cstdio>
#include <string>

#include "common/error.h"
#include "common/file_io.h"
#include "tests/support/random_model.h"

namespace octet {
namespace {

// conv-bn-relu, max pool, conv, avg pool, flatten, two linears.
Graph tiny_lenet() {
  GraphBuilder b;
  int x = b.input(1, 8, 8);
  x = b.relu(b.conv_bn("conv1", "bn1", x, 2, 3, 1, 0, true));  // 2x6x6
  x = b.max_pool(x, 2, 2);                                     // 2x3x3
  x = b.relu(b.conv("conv2", x, 3, 2, 1, 0, true));            // 3x2x2
  x = b.avg_pool(x, 2, 2);                                     // 3x1x1
  x = b.relu(b.linear("fc1", b.flatten(x), 4));
  b.linear("fc2", x, 10);
  return b.finish();
}

// A residual network: a fused add, an option-A shortcut, global average pooling.
Graph tiny_resnet() {
  GraphBuilder b;
  int x = b.input(1, 8, 8);
  x = b.relu(b.conv_bn("conv1", "bn1", x, 2, 3, 1, 1, true));
  int y = b.relu(b.conv_bn("block.conv1", "block.bn1", x, 4, 3, 2, 1, true));
  y = b.conv_bn("block.conv2", "block.bn2", y, 4, 3, 1, 1, true);
  x = b.relu(b.add(y, b.shortcut_a(x, 1)));
  b.linear("linear", b.flatten(b.global_avg_pool(x)), 10);
  return b.finish();
}

// A conv's signed output that only a conv reads: a wide activation (format version 5).
Graph tiny_stream() {
  GraphBuilder b;
  int x = b.input(1, 8, 8);
  x = b.relu(b.conv("conv1", x, 4, 3, 2, 1, true));  // 4x4x4
  x = b.conv("project", x, 3, 1, 1, 0, true);         // signed, read only by expand
  x = b.relu(b.conv("expand", x, 6, 3, 1, 1, true));
  b.linear("linear", b.flatten(b.global_avg_pool(x)), 10);
  return b.finish();
}

// An image of logits (a segmentation's): the output node a conv, its int32 accumulators per pixel.
Graph tiny_segmenter() {
  GraphBuilder b;
  int x = b.input(1, 8, 8);
  x = b.relu(b.conv("conv1", x, 4, 3, 2, 1, true));  // 4x4x4
  b.conv("classifier", x, 10, 3, 1, 1, true);        // 10x4x4
  return b.finish();
}

// An image of logits after a bilinear resize to a size (no whole factor), corners aligned.
Graph tiny_resizer() {
  GraphBuilder b;
  int x = b.input(1, 5, 7);
  x = b.relu(b.conv("conv1", x, 4, 3, 1, 1, true));  // 4x5x7
  x = b.resize_bilinear(x, 9, 11, true);               // 4x9x11
  b.conv("classifier", x, 10, 1, 1, 0, true);          // 10x9x11
  return b.finish();
}

// Several outputs (graph "output" marks): boxes per pixel, and a vector of logits from the same features.
Graph tiny_heads() {
  GraphBuilder b;
  int x = b.input(1, 8, 8);
  x = b.relu(b.conv("conv1", x, 4, 3, 2, 1, true));                  // 4x4x4
  const int boxes = b.conv("boxes", x, 4, 1, 1, 0, true);             // 4x4x4
  const int classes = b.linear("linear", b.flatten(b.global_avg_pool(x)), 10);
  Graph g = b.finish();
  g.place_outputs_last({boxes, classes});
  return g;
}

// A detection head's rows (graph "view"s): two levels' 2 anchors x 5 values, rows of 5 concatenated.
Graph tiny_rows() {
  GraphBuilder b;
  int x = b.input(1, 8, 8);
  x = b.relu(b.conv("conv1", x, 4, 3, 2, 1, true));                  // 4x4x4
  const int fine = b.conv("fine", x, 10, 1, 1, 0, true);              // 10x4x4
  const int coarse = b.conv("coarse", x, 10, 3, 2, 1, true);          // 10x2x2
  Graph g = b.finish();
  g.place_outputs_last({fine, coarse});
  for (int o : g.outputs()) g.nodes[static_cast<size_t>(o)].view = {"rows", 2, "hwak", 3, {}, 1, {}};
  return g;
}

// A level of YOLOv5's head, decoded (its view's "decode"): 2 anchors x 5 values (a box, an objectness), rows of 5.
Graph tiny_decoded() {
  GraphBuilder b;
  int x = b.input(1, 8, 8);
  x = b.relu(b.conv("conv1", x, 4, 3, 2, 1, true));        // 4x4x4
  const int level = b.conv("level", x, 10, 1, 1, 0, true);  // 10x4x4: as many as the checkpoint's classes
  Graph g = b.finish();
  g.place_outputs_last({level});
  g.nodes[static_cast<size_t>(g.find("level"))].view = {
      "output0", 2, "ahwk", 3, {DecodeKind::Yolov5, 2.0f, {10, 13, 16, 30}}, 1, {}};
  return g;
}

// A level of YOLOv8's head: boxes of 4 sides x 2 bins and 10 classes, placed in output0 (views' "at") and decoded;
// with `keypoints`, a pose head's 2 keypoints of (x, y, visibility) after them.
Graph tiny_yolov8(bool keypoints = false) {
  GraphBuilder b;
  int x = b.input(1, 8, 8);
  x = b.relu(b.conv("conv1", x, 4, 3, 2, 1, true));             // 4x4x4
  const int boxes = b.conv("boxes", x, 8, 1, 1, 0, true);      // 8x4x4
  const int classes = b.conv("classes", x, 10, 1, 1, 0, true);  // 10x4x4: as many as the checkpoint's classes
  const int points = keypoints ? b.conv("keypoints", x, 6, 1, 1, 0, true) : -1;
  Graph g = b.finish();
  // The classes last: as many as the checkpoint's.
  g.place_outputs_last(keypoints ? std::vector<int>{boxes, points, classes} : std::vector<int>{boxes, classes});
  g.nodes[static_cast<size_t>(g.find("boxes"))].view = {
      "output0", 1, "akhw", 2, {DecodeKind::Yolov8Boxes, 2.0f, {}}, 2, {0, 0}};
  g.nodes[static_cast<size_t>(g.find("classes"))].view = {
      "output0", 1, "akhw", 2, {DecodeKind::Sigmoid, 0, {}}, 2, {4, 0}};
  if (keypoints)
    g.nodes[static_cast<size_t>(g.find("keypoints"))].view = {
        "output0", 1, "akhw", 2, {DecodeKind::Yolov8Keypoints, 2.0f, {}}, 2, {14, 0}};
  return g;
}

Checkpoint tiny_checkpoint(const std::string& name, Graph graph, uint64_t seed) {
  Checkpoint c;
  c.model = name;
  c.dataset = "fashion-mnist";
  c.graph = std::move(graph);
  c.classes = dataset_info(c.dataset).classes;
  c.mean = {0.5f};
  c.std = {0.25f};
  draw_random_params(&c, seed);
  return c;
}

void write_seeds(const std::string& dir) {
  for (const std::string sub : {"checkpoint", "quantized", "safetensors"}) make_directories(dir + "/" + sub);
  uint64_t seed = 1;
  for (const auto& [name, graph] : {std::pair{"tiny_lenet", tiny_lenet()}, std::pair{"tiny_resnet", tiny_resnet()}}) {
    const Checkpoint checkpoint = tiny_checkpoint(name, graph, seed++);
    const std::string file = std::string(name) + ".octet";
    save_checkpoint(checkpoint, dir + "/checkpoint/" + file);
    save_checkpoint(checkpoint, dir + "/safetensors/" + file);
    for (const std::string rounding : {"nearest", "gptq"}) {
      QuantizeOptions options;
      options.weight_rounding = rounding;
      options.auto_samples = 16;
      options.gptq_samples = 16;
      const QuantizedModel model = quantize_random(checkpoint, options, 16);
      const std::string qfile = std::string(name) + "." + rounding + ".int8.octet";
      save_quantized_model(model, dir + "/quantized/" + qfile);
      save_quantized_model(model, dir + "/safetensors/" + qfile);
    }
    // Mixed precision: a conv with a fused residual and a pool kept in float (format version 3).
    if (std::string(name) == "tiny_resnet") {
      QuantizeOptions options = quick_quantize_options();
      options.float_nodes = {"block.conv2", "global_avg_pool_12"};
      save_quantized_model(quantize_random(checkpoint, options, 16), dir + "/quantized/tiny_resnet.mixed.int8.octet");
      // Unsigned activations, zero points on every ReLU's output, and the same float nodes (format version 4).
      options.unsigned_activations = true;
      save_quantized_model(quantize_random(checkpoint, options, 16),
                           dir + "/quantized/tiny_resnet.unsigned_mixed.int8.octet");
    }
  }
  QuantizeOptions options = quick_quantize_options();
  options.unsigned_activations = true;
  options.wide_bits = 16;
  const QuantizedModel wide = quantize_random(tiny_checkpoint("tiny_stream", tiny_stream(), seed), options, 16);
  check(wide.quant[wide.graph.find("project")].bits == 16, "make_seeds: tiny_stream's projection is not wide");
  save_quantized_model(wide, dir + "/quantized/tiny_stream.wide.int8.octet");
  save_quantized_model(
      quantize_random(tiny_checkpoint("tiny_segmenter", tiny_segmenter(), seed + 1), quick_quantize_options(), 16),
      dir + "/quantized/tiny_segmenter.int8.octet");
  save_quantized_model(
      quantize_random(tiny_checkpoint("tiny_resizer", tiny_resizer(), seed + 2), quick_quantize_options(), 16),
      dir + "/quantized/tiny_resizer.int8.octet");
  save_quantized_model(
      quantize_random(tiny_checkpoint("tiny_heads", tiny_heads(), seed + 3), quick_quantize_options(), 16),
      dir + "/quantized/tiny_heads.int8.octet");
  save_quantized_model(
      quantize_random(tiny_checkpoint("tiny_rows", tiny_rows(), seed + 4), quick_quantize_options(), 16),
      dir + "/quantized/tiny_rows.int8.octet");
  save_quantized_model(
      quantize_random(tiny_checkpoint("tiny_decoded", tiny_decoded(), seed + 5), quick_quantize_options(), 16),
      dir + "/quantized/tiny_decoded.int8.octet");
  save_quantized_model(
      quantize_random(tiny_checkpoint("tiny_yolov8", tiny_yolov8(), seed + 6), quick_quantize_options(), 16),
      dir + "/quantized/tiny_yolov8.int8.octet");
  save_quantized_model(
      quantize_random(tiny_checkpoint("tiny_yolov8_pose", tiny_yolov8(true), seed + 7), quick_quantize_options(), 16),
      dir + "/quantized/tiny_yolov8_pose.int8.octet");
}

}  // namespace
}  // namespace octet

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds CORPUS_DIR\n");
    return 2;
  }
  try {
    octet::write_seeds(argv[1]);
  } catch (const octet::Error& e) {
    std::fprintf(stderr, "make_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
