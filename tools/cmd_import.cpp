// `octet import`: a float checkpoint from a float ONNX model (any CNN of the
// operators interop/onnx_import.h lists), or from a PyTorch state_dict that
// torch.save wrote, read with LibTorch's pickle reader (so only where LibTorch
// is built in; Python users have octet.from_torch without it).
#include <cstdio>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "common/strings.h"
#include "graph/output_decode.h"
#include "models/state_dict_mapping.h"
#include "tools/commands.h"
#include "tools/options.h"
#include "tools/torch_helper.h"
#ifdef OCTET_HAVE_ONNX
#include "interop/onnx_import.h"
#endif
#ifdef OCTET_HAVE_TORCH
#include "train/torch_state_dict.h"
#endif

namespace octet {

namespace {

struct ImportOptions {
  std::string state_dict, output, json;
  TorchImportOptions torch;
  std::vector<int> input_size;  // ONNX: H W, or one value for both
};

// What both imports write: the checkpoint's file, model, data and size.
[[maybe_unused]] nlohmann::json written(const Checkpoint& c, const std::string& path, int64_t* values) {
  *values = 0;
  for (const auto& entry : c.params) *values += entry.second.numel();
  return {{"checkpoint", path}, {"model", c.model}, {"dataset", c.dataset}, {"tensors", c.params.size()},
          {"values", *values},  {"mean", c.mean},   {"std", c.std}};
}

bool is_onnx_file(const std::string& path) {
  return ends_after(path, ".onnx");
}

void run_onnx_import([[maybe_unused]] const ImportOptions& o) {
#ifndef OCTET_HAVE_ONNX
  fail("octet import of '" + o.state_dict + "' needs the ONNX library, and this octet was built without it: install "
       "it (Debian: apt-get install libonnx-dev) and build again");
#else
  check(o.torch.model.empty(), "--model is for PyTorch state_dicts; an ONNX file carries its own graph");
  std::vector<int> size = o.input_size;
  if (size.size() == 1) size.push_back(size[0]);
  OnnxImportSummary summary;
  const Checkpoint checkpoint =
      import_onnx(o.state_dict, OnnxImportOptions{o.torch.dataset, o.torch.mean, o.torch.std, size}, &summary);
  save_checkpoint(checkpoint, o.output);
  int64_t values = 0;
  nlohmann::json result = written(checkpoint, o.output, &values);
  std::string notes;  // "; its FLOAT16 values computed in float32", "; 4 outputs"
  for (const std::string& type : summary.computed_in_float32) notes += (notes.empty() ? "" : "/") + type;
  if (!notes.empty()) notes = "; its " + notes + " values computed in float32";
  std::string opset = std::to_string(summary.opset);
  if (summary.upgraded_from_opset)
    opset = std::to_string(summary.upgraded_from_opset) + ", converted to " + opset + " by ONNX's version converter";
  const int outputs = checkpoint.graph.output_count;
  const size_t model_out = model_outputs(checkpoint.graph, checkpoint.graph.shapes()).size();
  if (outputs > 1 && model_out == static_cast<size_t>(outputs)) notes += "; " + std::to_string(outputs) + " outputs";
  const std::string decode = decode_name(checkpoint.graph);
  if (model_out != static_cast<size_t>(outputs) || !decode.empty())  // a detection head's rows
    notes += "; " + std::to_string(model_out) + " output" + (model_out == 1 ? "" : "s") + " of " +
             std::to_string(outputs) + " output conv" + (outputs == 1 ? "" : "s") +
             (decode.empty() ? "" : ", decoded as " + decode_title(decode));
  std::FILE* out = report_stream(o.json);
  std::fprintf(out,
               "imported %s (ONNX opset %s, %lld nodes; %dx%dx%d images%s%s) as %lld octet nodes for %s: %lld "
               "batch norms folded, %zu tensors, %lld values -> %s\n",
               o.state_dict.c_str(), opset.c_str(), static_cast<long long>(summary.onnx_nodes),
               summary.input[0], summary.input[1], summary.input[2],
               summary.sized_by_options ? (o.input_size.empty() ? ", sized by the dataset" : ", sized by --input-size")
                                        : "",
               notes.c_str(),
               static_cast<long long>(summary.octet_nodes), checkpoint.dataset.c_str(),
               static_cast<long long>(summary.folded_batch_norms), checkpoint.params.size(),
               static_cast<long long>(values), o.output.c_str());
  result.update({{"onnx", o.state_dict},
                 {"opset", summary.opset},
                 {"upgraded_from_opset", summary.upgraded_from_opset},
                 {"onnx_nodes", summary.onnx_nodes},
                 {"octet_nodes", summary.octet_nodes},
                 {"outputs", outputs},
                 {"model_outputs", model_out},
                 {"folded_batch_norms", summary.folded_batch_norms},
                 {"input", summary.input},
                 {"input_sized_by_options", summary.sized_by_options},
                 {"computed_in_float32", summary.computed_in_float32},
                 {"dropped", summary.dropped}});
  if (!o.json.empty()) write_text_output(o.json, result.dump(2) + "\n");
#endif
}

void run_import([[maybe_unused]] ImportOptions o) {
  if (is_onnx_file(o.state_dict)) return run_onnx_import(o);
  check(!o.torch.model.empty(), "--model is required for a PyTorch state_dict (octet summary --list)");
  check(o.input_size.empty(), "--input-size is for ONNX files; a state_dict's model takes its --dataset's images");
  if (o.torch.dataset.empty()) o.torch.dataset = "cifar10";
#ifndef OCTET_HAVE_TORCH
  use_torch_helper();
  fail("octet import reads torch.save files with LibTorch, and this octet was built without it: install it "
       "(Debian: apt-get install libtorch-dev) and build again, or use octet.from_torch(model, ...) in Python");
#else
  o.torch.source = o.state_dict;
  const Checkpoint checkpoint = checkpoint_from_torch(read_torch_state_dict(o.state_dict), o.torch);
  save_checkpoint(checkpoint, o.output);
  int64_t values = 0;
  nlohmann::json result = written(checkpoint, o.output, &values);
  result["state_dict"] = o.state_dict;
  std::FILE* out = report_stream(o.json);
  std::fprintf(out, "imported %s as %s on %s: %zu tensors, %lld values -> %s\n", o.state_dict.c_str(),
               checkpoint.model.c_str(), checkpoint.dataset.c_str(), checkpoint.params.size(),
               static_cast<long long>(values), o.output.c_str());
  if (!o.json.empty()) write_text_output(o.json, result.dump(2) + "\n");
#endif
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto o = std::make_shared<ImportOptions>();
  auto* cmd = app.add_subcommand(
      "import",
      "Write an octet float checkpoint from a float ONNX model (file.onnx) or a PyTorch state_dict (torch.save of "
      "dict(model.state_dict()))");
  cmd->add_option("model_file", o->state_dict, "The .onnx file, or the file torch.save wrote")->required();
  cmd->add_option("--model", o->torch.model, "Architecture of a state_dict (octet summary --list)");
  cmd->add_option("--dataset", o->torch.dataset,
                  "Dataset the model was trained on (its images must fit the input; a state_dict's default: cifar10; "
                  "an ONNX model's: none, its input and classes as the file has them)");
  cmd->add_flag("!--no-bn", o->torch.batch_norm, "The state_dict's model has no batch norms");
  cmd->add_option("--mean", o->torch.mean, "Input normalisation mean per channel (default: the dataset's)");
  cmd->add_option("--std", o->torch.std, "Input normalisation std per channel (default: the dataset's)");
  cmd->add_option("--input-size", o->input_size,
                  "ONNX: the image's height and width (one value: both) where the file leaves them dynamic "
                  "(default: the dataset's); where it fixes them they must agree")
      ->expected(1, 2);
  cmd->add_option("-o,--output", o->output, "Checkpoint to write (.octet)")->required();
  add_json_option(cmd, o->json, "what was imported");
  cmd->callback([o] { run_import(*o); });
}

}  // namespace octet
