// Wide activations (NodeQuant::bits): the file format's version 5, the
// refusal of wide tensors that the runtimes cannot read or make (validation,
// the CUDA backends), and octet eval's report of them. (The
// harness, test_backend_ops, holds their kernels to the reference; test_zoo
// pins what they do for MobileNetV2.)
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/safetensors.h"
#include "evaluate/evaluate.h"
#include "qmodel/quantized_model.h"
#include "runtime/cuda/op_support.h"
#include "tests/ops/op_cases.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

// The harness's first wide case: input -> conv (wide) -> 1x1 conv, ReLU ->
// 1x1 conv + the wide residual (wide) -> conv, ReLU -> flatten -> linear.
QuantizedModel wide_stream() {
  const auto wide = std::find_if(op_cases().begin(), op_cases().end(),
                                 [](const OpCase& c) { return c.name.rfind("wide_stream_", 0) == 0; });
  return wide->model();
}

std::string format_version(const std::string& path) { return TensorFile::load(path).metadata.at("format_version"); }

TEST(WideActivations, SaveAndLoadKeepTheirBitsInFormatVersion5) {
  const QuantizedModel model = wide_stream();
  ASSERT_EQ(model.quant[1].bits, 16);
  TempDir dir;
  save_quantized_model(model, dir.path("wide.octet"));
  EXPECT_EQ(format_version(dir.path("wide.octet")), "5");
  const QuantizedModel loaded = load_quantized_model(dir.path("wide.octet"));
  for (size_t i = 0; i < model.quant.size(); ++i) EXPECT_EQ(loaded.quant[i].bits, model.quant[i].bits) << i;
  TensorFile as_version_4 = TensorFile::load(dir.path("wide.octet"));
  as_version_4.metadata["format_version"] = "4";
  as_version_4.save(dir.path("v4.octet"));
  EXPECT_NE(error_of([&] { load_quantized_model(dir.path("v4.octet")); }).find("which needs format version 5"),
            std::string::npos);

  QuantizedModel narrow = model;
  for (NodeQuant& q : narrow.quant) q.bits = 8;
  save_quantized_model(narrow, dir.path("narrow.octet"));
  EXPECT_EQ(format_version(dir.path("narrow.octet")), "2") << "an all-8-bit model keeps its earlier bytes";
}

TEST(WideActivations, ValidationRefusesWideTensorsTheRuntimesCannotServe) {
  const QuantizedModel model = wide_stream();
  const auto refusal = [&](const std::function<void(QuantizedModel&)>& change) {
    QuantizedModel m = model;
    change(m);
    return error_of([&] { m.validate(); });
  };
  EXPECT_NE(refusal([](QuantizedModel& m) { m.quant[1].bits = 17; }).find("17 bits (an activation has 8, or 9 to 16)"),
            std::string::npos);
  // Node 2 (the expansion) has a ReLU: its output is not signed.
  EXPECT_NE(refusal([](QuantizedModel& m) { m.quant[2].bits = 12; }).find("must be a dense int8 conv's signed output"),
            std::string::npos);
  // Node 4 (the last conv) is read by the flatten.
  EXPECT_NE(refusal([](QuantizedModel& m) {
              m.graph.nodes[4].relu = false;
              m.quant[4].bits = 12;
            }).find("but only dense int8 convs read wide activations"),
            std::string::npos);
  EXPECT_EQ(refusal([](QuantizedModel&) {}), "no error");
}

// cuda-imma reads and writes wide values (two byte planes, runtime/cuda/stored_value.h);
// cuda-dp4a and cuda-cublaslt refuse them by name, as cuda-imma does a dilated conv making one.
TEST(WideActivations, CudaImmaRunsThemAndTheOtherCudaBackendsRefuseThemByName) {
  QuantizedModel model = wide_stream();
  EXPECT_EQ(cuda::why_model_unsupported_on_imma(model), "");
  const std::string dp4a = cuda::why_model_unsupported(model);
  EXPECT_NE(dp4a.find("cuda-dp4a and cuda-cublaslt read 8-bit activations only, and node '" +
                      model.graph.nodes[1].name + "' (conv2d) has 16-bit activations"),
            std::string::npos)
      << dp4a;
  EXPECT_NE(dp4a.find("--wide-bits 8"), std::string::npos) << dp4a;
  model.graph.nodes[1].dilation = 2;
  const std::string dilated = cuda::why_model_unsupported_on_imma(model);
  EXPECT_NE(dilated.find("cuda-imma's dilated convs (and those of non-square kernels) read and write 8-bit "
                         "activations only"),
            std::string::npos)
      << dilated;
  EXPECT_NE(dilated.find("(a dilated conv) makes or reads"), std::string::npos) << dilated;
}

// octet eval's per-layer table marks a wide layer as octet quantize does, and
// its JSON (as Python's evaluate) gives every layer's bits.
TEST(WideActivations, TheEvalReportGivesTheirBits) {
  EvalReport r;
  r.images = 10;
  r.layers = {{"stream", "conv2d", 3525.6f, 9.29f, "max", 41.5, 0, 16},
              {"expand", "conv2d", 42.7f, 5.98f, "mse", 31.2, -128, 8}};
  const std::string table = eval_report_table(r);
  EXPECT_NE(table.find("max (16-bit)"), std::string::npos) << table;
  EXPECT_EQ(table.find("mse ("), std::string::npos) << table;
  const nlohmann::json json = nlohmann::json::parse(eval_report_json(r));
  EXPECT_EQ(json["layers"][0]["bits"], 16);
  EXPECT_EQ(json["layers"][1]["bits"], 8);
}

}  // namespace
}  // namespace octet
