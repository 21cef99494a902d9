#include "tests/support/random_model.h"

#include <cmath>
#include <random>
#include <algorithm>

#include "calibrate/calibrate.h"
#include "common/strings.h"
#include "data/dataset.h"
#include "graph/fold.h"

namespace octet {

QuantizeOptions quick_quantize_options() {
  QuantizeOptions o;
  o.method = AmaxMethod::Max;
  o.weight_rounding = "nearest";
  return o;
}

Checkpoint random_checkpoint(const std::string& model, const ModelOptions& o, uint64_t seed) {
  Checkpoint c;
  c.model = model;
  c.dataset = o.channels == 1 ? "fashion-mnist" : "cifar10";
  c.batch_norm = o.batch_norm;
  c.graph = build_model(model, o);
  c.classes = dataset_info(c.dataset).classes;
  c.mean.assign(o.channels, 0.5f);
  c.std.assign(o.channels, 0.25f);
  draw_random_params(&c, seed);
  return c;
}

namespace {
// A CIFAR-10 checkpoint of a hand-built graph with random parameters.
Checkpoint cifar_test_checkpoint(const std::string& model, Graph graph, uint64_t seed) {
  Checkpoint c;
  c.model = model;
  c.dataset = "cifar10";
  c.batch_norm = true;
  c.graph = std::move(graph);
  c.classes = dataset_info(c.dataset).classes;
  c.mean.assign(3, 0.5f);
  c.std.assign(3, 0.25f);
  draw_random_params(&c, seed);
  return c;
}
}  // namespace

Checkpoint random_grouped_checkpoint(uint64_t seed) {
  GraphBuilder b;
  int x = b.input(3, 16, 16);
  x = b.relu(b.conv_bn("stem", "stem_bn", x, 12, 3, 1, 1, true));
  x = b.relu(b.batch_norm("dw_bn", b.conv("dw", x, 12, 3, 2, 1, false, 12)));  // depthwise
  const int expand = b.relu(b.batch_norm("gc_bn", b.conv("gc", x, 18, 1, 1, 0, false, 3)));
  const int project = b.conv("project", b.relu(b.conv("dw5", expand, 18, 5, 1, 2, true, 18)), 12, 1, 1, 0, true);
  x = b.relu(b.add(project, x));  // an inverted residual, as MobileNetV2's
  b.linear("fc", b.flatten(b.global_avg_pool(b.conv("dw_m2", x, 24, 3, 2, 1, true, 12))), 10);
  return cifar_test_checkpoint("grouped-test", b.finish(), seed);
}

Checkpoint random_dilated_checkpoint(uint64_t seed) {
  GraphBuilder b;
  int x = b.input(3, 16, 16);
  x = b.relu(b.conv_bn("stem", "stem_bn", x, 12, 3, 1, 1, true));
  const int dense = b.relu(b.batch_norm("dil_bn", b.conv("dil", x, 12, 3, 1, 2, false, 1, 2)));
  const int depthwise = b.relu(b.batch_norm("dw_bn", b.conv("dw", dense, 12, 3, 1, 3, false, 12, 3)));
  x = b.relu(b.add(b.conv("project", depthwise, 12, 1, 1, 0, true), x));
  x = b.relu(b.conv("gc", x, 18, 3, 2, 2, true, 3, 2));  // 18 x 8 x 8
  b.linear("fc", b.flatten(b.global_avg_pool(x)), 10);
  return cifar_test_checkpoint("dilated-test", b.finish(), seed);
}

Checkpoint random_rectangular_checkpoint(uint64_t seed) {
  GraphBuilder b;
  int x = b.input(3, 16, 16);
  x = b.relu(b.conv_bn("stem", "stem_bn", x, 12, 3, 1, 1, true));
  // Inception's factorised 7x7: 1x7 then 7x1 (each padded 3 along its long side by a Pad2d), beside a 1x1.
  const int wide = b.relu(b.batch_norm("wide_bn", b.conv_rect("wide", b.pad(x, 0, 3, 0, 3), 10, 1, 7, 1, 0, false)));
  const int tall = b.relu(b.batch_norm("tall_bn", b.conv_rect("tall", b.pad(wide, 3, 0, 3, 0), 12, 7, 1, 1, 0, false)));
  x = b.concat({tall, b.relu(b.conv("branch", x, 6, 1, 1, 0, true))});  // 18 channels
  x = b.relu(b.conv_rect("down", x, 20, 3, 5, 2, 1, true));  // 20 x 8 x 7
  b.linear("fc", b.flatten(b.global_avg_pool(x)), 10);
  return cifar_test_checkpoint("rectangular-test", b.finish(), seed);
}

Checkpoint random_imagenet_ops_checkpoint(uint64_t seed) {
  GraphBuilder b;
  int x = b.input(3, 16, 16);
  x = b.activation(b.conv_bn("stem", "stem_bn", x, 16, 3, 1, 1, true), "clip", 0.0f, 6.0f);  // ReLU6, fused
  x = b.max_pool(x, 3, 2, 1);
  x = b.activation(b.conv("dw", x, 16, 3, 1, 1, true, 16), "hard_swish");
  const int squeezed = b.relu(b.conv("se_reduce", b.global_avg_pool(x), 8, 1, 1, 0, true));
  x = b.mul(x, b.activation(b.conv("se_expand", squeezed, 16, 1, 1, 0, true), "hard_sigmoid", 1.0f / 6.0f, 0.5f));
  const int branch = b.activation(b.conv("branch", x, 12, 3, 1, 1, true), "silu");
  x = b.concat({b.conv("a", x, 8, 1, 1, 0, true), branch, b.max_pool(x, 3, 1, 1, true)});  // 36 channels
  const int left = b.channel_slice(x, 0, 18);
  const int right = b.activation(b.conv("right", b.channel_slice(x, 18, 18), 18, 3, 1, 1, true, 18), "leaky_relu", 0.1f);
  x = b.channel_shuffle(b.concat({left, right}), 2);
  x = b.avg_pool(b.activation(x, "sigmoid"), 2, 2, 0, true);
  b.linear("fc", b.flatten(b.global_avg_pool(x)), 10);
  return cifar_test_checkpoint("imagenet-ops-test", b.finish(), seed);
}

void draw_random_params(Checkpoint* checkpoint, uint64_t seed) {
  Checkpoint& c = *checkpoint;
  c.params.clear();
  std::mt19937_64 rng(seed);
  for (const Graph::Param& p : c.graph.params()) {
    FloatTensor t(Shape(p.shape.begin(), p.shape.end()));
    const std::string& name = p.name;
    if (ends_with(name, ".running_var")) {
      std::uniform_real_distribution<float> d(0.5f, 2.0f);
      for (float& v : t.data) v = d(rng);
    } else if (ends_with(name, ".running_mean") || ends_with(name, ".bias")) {
      std::normal_distribution<float> d(0.0f, 0.1f);
      for (float& v : t.data) v = d(rng);
    } else if (p.shape.size() == 1) {  // batch-norm gamma
      std::uniform_real_distribution<float> d(0.5f, 1.5f);
      for (float& v : t.data) v = d(rng);
    } else {
      const double fan_in = static_cast<double>(t.numel() / t.dim(0));
      std::normal_distribution<float> d(0.0f, static_cast<float>(std::sqrt(2.0 / fan_in)));
      for (float& v : t.data) v = d(rng);
    }
    c.params[name] = std::move(t);
  }
}

std::vector<float> random_images(int64_t count, const ActShape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, 0.8f);
  std::vector<float> out(static_cast<size_t>(count * s.numel()));
  for (float& v : out) v = std::clamp(d(rng), -2.0f, 2.0f);
  return out;
}

QuantizedModel quantize_random(const Checkpoint& c, const QuantizeOptions& options, int64_t calibration, uint64_t seed) {
  const FloatModel folded = fold_for_inference(c.graph, c.params);
  const FloatExecutor executor(folded);
  const Calibration cal =
      calibrate(executor, random_images(calibration, executor.shapes()[0], seed), calibration, 32);
  return quantize(c, folded, cal, options);
}

}  // namespace octet
