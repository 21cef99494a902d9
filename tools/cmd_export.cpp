// `octet export`: a quantized model in a format other tools run. --onnx: a
// standard ONNX QDQ graph (interop/onnx_export.h) for ONNX Runtime or TensorRT;
// --target picks octet's arithmetic (faithful) or ONNX Runtime's int8 kernels.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_io.h"
#include "qmodel/quantized_model.h"
#include "tools/commands.h"
#include "tools/options.h"
#ifdef OCTET_HAVE_ONNX
#include "interop/onnx_export.h"
#endif

namespace octet {

namespace {

struct ExportOptions {
  std::string quantized, onnx, target = "faithful", json;
};

void run_export(const ExportOptions& o) {
  [[maybe_unused]] const QuantizedModel model = load_quantized_model(o.quantized);  // a bad file is named first
#ifndef OCTET_HAVE_ONNX
  fail("octet export --onnx needs the ONNX library, and this octet was built without it: install it (Debian: "
       "apt-get install libonnx-dev) and build again (tools/setup.sh build)");
#else
  const OnnxTarget target = onnx_target_from_name(o.target, "--target");
  const OnnxExportSummary s = export_onnx(model, o.onnx, target);
  std::fprintf(report_stream(o.json),
               "%s -> %s (target %s): ONNX opset %d, %lld nodes (%lld QuantizeLinear, %lld DequantizeLinear), %lld "
               "initializers, %lld bytes; checker and shape inference passed\n",
               o.quantized.c_str(), o.onnx.c_str(), onnx_target_name(target), s.opset, static_cast<long long>(s.nodes),
               static_cast<long long>(s.quantize_linear), static_cast<long long>(s.dequantize_linear),
               static_cast<long long>(s.initializers), static_cast<long long>(s.bytes));
  if (s.wide_roundings > 0)
    std::fprintf(report_stream(o.json),
                 "%lld wide (int16) activations rounded in float: ONNX Runtime runs the convs that read or make them "
                 "in float (--target onnxruntime writes them at 8 bits)\n",
                 static_cast<long long>(s.wide_roundings));
  if (s.wide_narrowed > 0)
    std::fprintf(report_stream(o.json),
                 "%lld wide (int16) activations written at 8 bits, which ONNX Runtime fuses (--target faithful keeps "
                 "them wide)\n",
                 static_cast<long long>(s.wide_narrowed));
  if (!o.json.empty())
    write_text_output(o.json, nlohmann::json{{"quantized", o.quantized},
                                             {"onnx", o.onnx},
                                             {"target", onnx_target_name(target)},
                                             {"opset", s.opset},
                                             {"nodes", s.nodes},
                                             {"quantize_linear", s.quantize_linear},
                                             {"dequantize_linear", s.dequantize_linear},
                                             {"initializers", s.initializers},
                                             {"wide_roundings", s.wide_roundings},
                                             {"wide_narrowed", s.wide_narrowed},
                                             {"bytes", s.bytes}}
                                  .dump(2) + "\n");
#endif
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand("export", "Write a quantized model for other runtimes (ONNX QDQ)");
  cmd->add_option("--quantized", o->quantized, "Quantized model (.octet, from octet quantize)")->required();
  cmd->add_option("--onnx", o->onnx,
                  "Write an ONNX QDQ graph (opset 13: QuantizeLinear/DequantizeLinear around Conv, Gemm, Add, "
                  "pooling; per-channel int8 weights, int32 biases; a Gemm's, in the faithful target, as the float "
                  "its DequantizeLinear gives) to FILE")
      ->required();
  cmd->add_option("--target", o->target,
                  "faithful: octet's int8 tensors as they are (int8, zero point 0, or -128 for a tensor stored "
                  "unsigned; a residual added before the conv's one rounding; a conv with neither a residual nor a "
                  "ReLU, or whose output is stored unsigned, adds its bias after it); ONNX Runtime runs it with "
                  "float convolutions. onnxruntime: the QDQ "
                  "pattern ONNX Runtime fuses into QLinearConv/QLinearAdd/QGemm, with roundings octet does not "
                  "make: uint8 activations (a ReLU's output with zero point 0: exact for a tensor octet stores "
                  "unsigned, up to 255 steps where octet saturates at 127 for a signed one; a signed tensor a "
                  "conv or linear reads at 7 bits, zero point 64, against the int16 saturation of ORT's AVX2 "
                  "kernels; others zero point 128), a wide (int16) activation at 8 bits over its range, a "
                  "residual conv rounded to its scale before the Add, and value-moving operators on the uint8 "
                  "integers")
      ->capture_default_str();
  add_json_option(cmd, o->json, "what was written");
  cmd->callback([o] { run_export(*o); });
}

}  // namespace octet
