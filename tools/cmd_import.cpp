// `octet import`: a float checkpoint from a PyTorch state_dict that torch.save
// wrote, read with LibTorch's pickle reader (so only where LibTorch is built
// in; Python users have octet.from_torch without it).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "models/state_dict_mapping.h"
#include "tools/commands.h"
#include "tools/options.h"
#include "tools/torch_helper.h"
#ifdef OCTET_HAVE_TORCH
#include "train/torch_state_dict.h"
#endif

namespace octet {

namespace {

struct ImportOptions {
  std::string state_dict, output, json;
  TorchImportOptions torch;
};

void run_import([[maybe_unused]] ImportOptions o) {
#ifndef OCTET_HAVE_TORCH
  use_torch_helper();
  fail("octet import reads torch.save files with LibTorch, and this octet was built without it: install it "
       "(Debian: apt-get install libtorch-dev) and build again, or use octet.from_torch(model, ...) in Python");
#else
  o.torch.source = o.state_dict;
  const Checkpoint checkpoint = checkpoint_from_torch(read_torch_state_dict(o.state_dict), o.torch);
  save_checkpoint(checkpoint, o.output);
  int64_t values = 0;
  for (const auto& entry : checkpoint.params) values += entry.second.numel();
  std::FILE* out = report_stream(o.json);
  std::fprintf(out, "imported %s as %s on %s: %zu tensors, %lld values -> %s\n", o.state_dict.c_str(),
               checkpoint.model.c_str(), checkpoint.dataset.c_str(), checkpoint.params.size(),
               static_cast<long long>(values), o.output.c_str());
  if (!o.json.empty())
    write_text_output(o.json, nlohmann::json{{"state_dict", o.state_dict},
                                             {"checkpoint", o.output},
                                             {"model", checkpoint.model},
                                             {"dataset", checkpoint.dataset},
                                             {"tensors", checkpoint.params.size()},
                                             {"values", values},
                                             {"mean", checkpoint.mean},
                                             {"std", checkpoint.std}}
                                  .dump(2) + "\n");
#endif
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto o = std::make_shared<ImportOptions>();
  o->torch.dataset = "cifar10";
  auto* cmd = app.add_subcommand(
      "import", "Write an octet float checkpoint from a PyTorch state_dict (torch.save of dict(model.state_dict()))");
  cmd->add_option("state_dict", o->state_dict, "File torch.save wrote")->required();
  cmd->add_option("--model", o->torch.model, "Architecture (octet summary --list)")->required();
  cmd->add_option("--dataset", o->torch.dataset, "Dataset the model was trained on")->capture_default_str();
  cmd->add_flag("!--no-bn", o->torch.batch_norm, "The model has no batch norms");
  cmd->add_option("--mean", o->torch.mean, "Input normalisation mean per channel (default: the dataset's)");
  cmd->add_option("--std", o->torch.std, "Input normalisation std per channel (default: the dataset's)");
  cmd->add_option("-o,--output", o->output, "Checkpoint to write (.octet)")->required();
  add_json_option(cmd, o->json, "what was imported");
  cmd->callback([o] { run_import(*o); });
}

}  // namespace octet
