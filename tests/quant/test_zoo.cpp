// Accuracy regression tests: every zoo checkpoint is quantized with the
// default settings (auto, per-channel, GPTQ, 1024 calibration images) and
// evaluated on its full test set. octet is deterministic, so the int8 top-1
// is pinned exactly; the float-int8 gap is bounded, and agreement may not
// fall below what the float-scored `auto` reached (99.56%, 98.72%, 99.32%).
#include <gtest/gtest.h>

#include <algorithm>


#include "evaluate/evaluate.h"
#include "qmodel/precision.h"
#include "quant/pipeline.h"
#include "tests/support/test_util.h"
#ifdef OCTET_HAVE_ONNX
#include "interop/onnx_import.h"
#endif

namespace octet {
namespace {

struct ZooCase {
  const char* name;
  double float_top1, int8_top1;  // pinned, percent of the full test set
  double max_drop;               // int8 >= float - max_drop (points)
  double min_agreement;          // percent of images where int8 and float agree
};

class ZooAccuracy : public ::testing::TestWithParam<ZooCase> {};

TEST_P(ZooAccuracy, DefaultQuantizationKeepsAccuracy) {
  const ZooCase& z = GetParam();
  const std::string path = zoo_checkpoint(z.name);
  ASSERT_TRUE(file_exists(path)) << path;
  const Checkpoint checkpoint = load_checkpoint(path);
  const std::string dir = checkpoint.dataset == "cifar10" ? cifar10_dir() : fashion_mnist_dir();
  if (dir.empty() || !path_exists(dir + (checkpoint.dataset == "cifar10" ? "/test_batch.bin" : "")))
    GTEST_SKIP() << checkpoint.dataset << " files are not available (run tools/setup.sh, which writes CIFAR-10)";

  const QuantizeResult q = quantize_checkpoint(checkpoint, dir, QuantizeOptions{}, 1024);
  const Dataset test = load_dataset(checkpoint.dataset, dir, Split::Test);
  const EvalReport r = evaluate(FloatExecutor(q.folded), *make_engine(q.model, backend_names::kCpu), test, 0, false);
  std::printf("%s: float %.2f%%  int8 %.2f%%  difference %+.2f  agreement %.2f%%\n", z.name, r.float_top1, r.int8_top1,
              r.int8_top1 - r.float_top1, r.agreement);
  EXPECT_EQ(r.images, 10000);
  EXPECT_NEAR(r.float_top1, z.float_top1, 1e-9);
  EXPECT_NEAR(r.int8_top1, z.int8_top1, 1e-9);
  EXPECT_GE(r.int8_top1, r.float_top1 - z.max_drop);
  EXPECT_GE(r.agreement, z.min_agreement);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooAccuracy,
                         ::testing::Values(ZooCase{"lenet5_fmnist", 91.32, 91.27, 0.3, 99.56},
                                           ZooCase{"lenet5_cifar10", 71.77, 71.59, 0.5, 98.72},
                                           ZooCase{"resnet20_cifar10", 88.08, 88.07, 0.3, 99.32}),
                         [](const auto& info) { return std::string(info.param.name); });

// The zoo's ONNX files, trained by PyTorch (python/tools/train_mobilenet_v2.py,
// train_convnext.py) and kept as the files a user would bring, imported.
class ZooAccuracyOnnx : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef OCTET_HAVE_ONNX
    GTEST_SKIP() << "built without the ONNX library (libonnx-dev): the model cannot be imported";
#else
    if (dir_.empty() || !path_exists(dir_ + "/test_batch.bin"))
      GTEST_SKIP() << "CIFAR-10 files are not available (run tools/setup.sh, which writes them)";
    checkpoint_ = imported("mobilenet_v2_cifar10.onnx");
#endif
  }

#ifdef OCTET_HAVE_ONNX
  static Checkpoint imported(const std::string& file) {
    OnnxImportOptions import;
    import.dataset = "cifar10";
    return import_onnx(source_dir() + "/models/zoo/" + file, import);
  }
#endif

  // `checkpoint` (default: the MobileNetV2) quantized as `options` say on
  // `calibration` images, evaluated on the first `images` test images (0: all).
  EvalReport evaluate_quantized(const QuantizeOptions& options, int64_t calibration, int64_t images,
                                QuantizedModel* model = nullptr, const Checkpoint* checkpoint = nullptr) const {
    const Checkpoint& c = checkpoint ? *checkpoint : checkpoint_;
    const QuantizeResult q = quantize_checkpoint(c, dir_, options, calibration);
    if (model) *model = q.model;
    const Dataset test = load_dataset(c.dataset, dir_, Split::Test);
    return evaluate(FloatExecutor(q.folded), *make_engine(q.model, backend_names::kCpu), test, images, false);
  }

  const std::string dir_ = cifar10_dir();
  Checkpoint checkpoint_;
};

// Signed activations on 512 calibration images, the first 2,000 test images.
TEST_F(ZooAccuracyOnnx, MobileNetV2DefaultQuantizationKeepsAccuracy) {
  const EvalReport r = evaluate_quantized(QuantizeOptions{}, 512, 2000);
  std::printf("mobilenet_v2_cifar10: float %.2f%%  int8 %.2f%%  difference %+.2f  agreement %.2f%%\n", r.float_top1,
              r.int8_top1, r.int8_top1 - r.float_top1, r.agreement);
  EXPECT_NEAR(r.float_top1, 76.50, 1e-9);
  EXPECT_NEAR(r.int8_top1, 76.65, 1e-9);
  EXPECT_GE(r.int8_top1, r.float_top1 - 0.5);
  EXPECT_GE(r.agreement, 97.9);
}

// The command line's defaults (unsigned activations, a 16-bit residual
// stream: issue 35's goal of 99% agreement with per-channel weights and the
// defaults) on the whole test set: 98.86% with 8-bit activations everywhere,
// 99.10% with the wide stream.
TEST_F(ZooAccuracyOnnx, MobileNetV2CommandLineDefaultsAgreeWithFloatOn99PercentOfImages) {
  const NamedQuantizeOptions defaults;
  QuantizedModel model;
  const EvalReport r = evaluate_quantized(defaults.options(checkpoint_), defaults.calibration_samples, 0, &model);
  EXPECT_EQ(precision_summary(model).wide.size(), 17u) << "every block's output: the residual stream";
  std::printf("mobilenet_v2_cifar10 (command line defaults): float %.2f%%  int8 %.2f%%  agreement %.2f%%\n",
              r.float_top1, r.int8_top1, r.agreement);
  EXPECT_NEAR(r.float_top1, 76.93, 1e-9);
  EXPECT_NEAR(r.int8_top1, 76.87, 1e-9);
  EXPECT_GE(r.agreement, 99.0);
}

#ifdef OCTET_HAVE_ONNX
// The zoo's ConvNeXt (LayerNorm and GELU on channels-last values, layer
// scales; 69.56% after 10 epochs) with the command line's defaults, on the
// first 2,000 test images (the whole set, 52 s here, gives float 69.56%, int8
// 69.53%, agreement 98.56%).
TEST_F(ZooAccuracyOnnx, ConvNeXtCommandLineDefaultsKeepAccuracy) {
  const Checkpoint convnext = imported("convnext_cifar10.onnx");
  const NamedQuantizeOptions defaults;
  QuantizedModel model;
  const EvalReport r =
      evaluate_quantized(defaults.options(convnext), defaults.calibration_samples, 2000, &model, &convnext);
  EXPECT_EQ(std::count_if(model.graph.nodes.begin(), model.graph.nodes.end(),
                          [](const Node& n) { return n.op == Op::LayerNorm; }),
            10);
  std::printf("convnext_cifar10 (command line defaults): float %.2f%%  int8 %.2f%%  agreement %.2f%%\n", r.float_top1,
              r.int8_top1, r.agreement);
  EXPECT_NEAR(r.float_top1, 70.45, 1e-9);
  EXPECT_NEAR(r.int8_top1, 70.50, 1e-9);
  EXPECT_GE(r.agreement, 98.5);
}
#endif

}  // namespace
}  // namespace octet
